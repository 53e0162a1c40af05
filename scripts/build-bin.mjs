/**
 * Bundles what the package's bin runs. Run by `npm run build` after tsc.
 *
 * - `dist/mcpx.cjs` (src/daemon/launch.ts), the bin: one CommonJS file of Node built-ins, so a
 *   client's `--daemon` entry starts the shim without the ES module loader or any dependency;
 *   every other command line imports the CLI bundle.
 * - `dist/bundle/` , the CLI: tsc's `dist/index.js` and what it imports, dependencies included,
 *   as ES modules split where the code imports lazily (a command, HTTP serving, the tokenizer
 *   each stay a chunk of their own, loaded when used) and minified. V8 keeps the source text of
 *   every loaded module in the heap, and a module per file costs more than a chunk: idle mcpx
 *   with 3 upstreams held ~11–13 MB less RSS bundled (`npm run bench -- memory`, both builds
 *   side by side). Identifiers are shortened too: the bundle is ~18 % smaller, though the memory
 *   bench shows no gain beyond its spread between runs. `keepNames`: `.name` stays what the code
 *   set; each chunk has a source map, so `node --enable-source-maps` maps a trace back to src/.
 *
 * tsc's `dist/` stays as it is: the library (`main`), the worker threads' entries, and what
 * tests import.
 */
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.join(root, "dist");
const outfile = path.join(dist, "mcpx.cjs");
await build({
  stdin: {
    contents: `import { launch } from "./src/daemon/launch.ts";\nvoid launch(process.argv.slice(2), () => import("./bundle/index.js"));\n`,
    resolveDir: root,
    sourcefile: "mcpx-bin.ts",
    loader: "ts",
  },
  outfile,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Resolved beside the bin at run time: the CLI, loaded only when it is not the shim.
  external: ["./bundle/index.js"],
  // version.ts finds package.json from its own URL; in the bundle that is the bundle's.
  banner: {
    js: '#!/usr/bin/env node\nconst __mcpxUrl = require("node:url").pathToFileURL(__filename).href;',
  },
  define: { "import.meta.url": "__mcpxUrl" },
  logLevel: "warning",
});
chmodSync(outfile, 0o755);

/**
 * Dependencies left out of the CLI bundle, loaded from node_modules as before: code that finds
 * files beside its own (`__dirname`, `import.meta`), a UMD module esbuild cannot follow, and
 * WebAssembly loaders. The build fails naming any other dependency that does so.
 */
const EXTERNAL = [
  "@jitl/*", // QuickJS: loads its .wasm beside its own file
  "@swc/wasm-typescript", // the same, for TypeScript in code mode
  "quickjs-emscripten*",
  "ioredis", // __dirname in its error traces
  "jsonc-parser", // UMD: requires "./impl/…" at run time
  "undici", // __filename in its stack traces (lazily loaded, for remote servers' OAuth)
];

/**
 * json-schema-to-typescript requires prettier as it loads, for a formatting pass mcpx turns off
 * (`format: false`, src/compression/schema.ts): the bundle gets a stand-in that says so if it is
 * ever called, instead of prettier's megabytes on the first `describe` (and instead of resolving
 * a package mcpx does not depend on from dist/bundle/).
 */
const PRETTIER =
  'export function format() { throw new Error("prettier is not part of mcpx: json-schema-to-typescript runs with format: false"); }';

/**
 * Data and codecs Express's stack loads whole, of which mcpx's HTTP serving uses a handful: the
 * bundle gets the parts it uses. V8 keeps every loaded chunk's source in the heap (Express's chunk
 * 840 → 197 KB), and these tables also become objects as they load (~1.4 MB of heap, `require`d
 * in a bare node).
 *
 * - `mime-db` (every media type, ~2,500, for `mime-types`): only the types below, their records
 *   taken from the installed `mime-db` as the build runs. Express still answers a type it does
 *   not know as `application/octet-stream`, as it does for any unknown type.
 * - `iconv-lite` (body-parser and raw-body decode request bodies with it, and load all of its
 *   single- and double-byte tables at the first request): the platform's WHATWG decoder
 *   (`TextDecoder`, full ICU in node) under the same names, which knows every charset a browser
 *   does. Not UTF-32, which JSON bodies alone could name: such a body is refused as body-parser
 *   refuses an unknown charset (415).
 */
const MEDIA_TYPES = [
  "application/json",
  "application/javascript",
  "application/octet-stream",
  "application/x-www-form-urlencoded",
  "application/xml",
  "application/wasm",
  "application/manifest+json",
  "font/woff2",
  "image/png",
  "image/svg+xml",
  "image/x-icon",
  "multipart/form-data",
  "text/css",
  "text/csv",
  "text/html",
  "text/javascript",
  "text/markdown",
  "text/plain",
  "text/xml",
];
const ICONV = `
function decoderOf(encoding) {
  try {
    return new TextDecoder(String(encoding).trim());
  } catch {
    throw new Error("Encoding not recognized: '" + encoding + "' (the bundle of mcpx decodes what TextDecoder knows)");
  }
}
export function encodingExists(encoding) {
  try { decoderOf(encoding); return true; } catch { return false; }
}
export function getDecoder(encoding) {
  const decoder = decoderOf(encoding);
  return { write: (chunk) => decoder.decode(chunk, { stream: true }), end: () => decoder.decode() || undefined };
}
export function decode(buffer, encoding) {
  return decoderOf(encoding).decode(buffer);
}
export default { encodingExists, getDecoder, decode };
`;
/** Packages the bundle takes from these sources instead of node_modules (see above). */
const STAND_INS = { prettier: PRETTIER, "iconv-lite": ICONV };

/**
 * Modules of the SDK's client that read a global node loads on first read (web streams) as they
 * load, though only remote upstreams use what they make of it: the read moves to first use.
 * Loading web streams costs ~0.8 MB of RSS in every mcpx, idle ones included. (Web Crypto is not
 * worth an edit: importing `node:crypto` as an ES module loads it anyway.) Each
 * edit must match its file exactly `count` times, or the build fails (a new version of the
 * package needs the edit looked at again).
 */
const LAZY_GLOBALS = [
  {
    // `class … extends TransformStream` reads the global as the module loads.
    file: /[\\/]node_modules[\\/]eventsource-parser[\\/]dist[\\/]stream\.js$/,
    edits: [
      {
        from: "class EventSourceParserStream extends TransformStream {",
        to: "let EventSourceParserStreamClass;\nfunction EventSourceParserStream(options) {\n  EventSourceParserStreamClass ??= class extends TransformStream {",
        count: 1,
      },
      {
        from: "\n}\nexport {",
        to: "\n};\n  return new EventSourceParserStreamClass(options);\n}\nexport {",
        count: 1,
      },
    ],
  },
];

/** `source` of `file` with its LAZY_GLOBALS edits, or undefined when it has none. */
function lazyGlobals(file, source) {
  const patch = LAZY_GLOBALS.find((p) => p.file.test(file));
  if (!patch) return undefined;
  let out = source;
  for (const { from, to, count } of patch.edits) {
    const found = out.split(from).length - 1;
    if (found !== count)
      throw new Error(
        `${path.relative(root, file)}: expected ${JSON.stringify(from)} ${count} time(s), found ${found}: look at LAZY_GLOBALS in scripts/build-bin.mjs again`,
      );
    out = out.replaceAll(from, to);
  }
  return out;
}
/**
 * zod's `locales` namespace (error messages in 60-odd languages, as `z.locales.de()` etc.), which
 * nothing in mcpx or the SDK sets: English, zod's default, is configured apart from it.
 */
const ZOD_LOCALES = "export {};";
/** The `mime-db` beside the module that requires it, cut to MEDIA_TYPES. */
function mediaTypes(importer) {
  const file = createRequire(importer).resolve("mime-db/db.json");
  const db = JSON.parse(readFileSync(file, "utf8"));
  const kept = Object.fromEntries(MEDIA_TYPES.filter((t) => db[t]).map((t) => [t, db[t]]));
  const missing = MEDIA_TYPES.filter((t) => !db[t]);
  if (missing.length > 0) throw new Error(`build: ${file} has no ${missing.join(", ")}`);
  return `module.exports = ${JSON.stringify(kept)};`;
}

/**
 * `keepNames` wraps every named function in esbuild's `__name(fn, "name")`, which sets `.name`
 * with `Object.defineProperty` each time the function is created: for the closures made per call
 * (the SDK's request context, mcpx's executor) that was ~30 runtime calls per relayed call. The
 * names that matter are constructors' (`new.target.name`, `constructor.name`): arrow and async
 * functions (no `prototype`) keep the name minification gave them, as without `keepNames`.
 * Measured on the stdio relay, interleaved (bench/speed-arms.ts's echo call): CPU per call
 * −4 to −10 %, added p50 −0.01 to −0.03 ms; over HTTP with 32 clients CPU −2 to −8 %.
 * The helper sits in esbuild's runtime chunk, which holds no module: no mapping moves.
 */
function nameOnlyConstructors(outputs, inputs) {
  const helper = /(\w+)=\((\w+),(\w+)\)=>(\w+)\(\2,"name",\{value:\3,configurable:!0\}\)/g;
  const found = outputs.flatMap(([file]) => {
    const code = readFileSync(path.join(root, file), "utf8");
    return [...code.matchAll(helper)].map((m) => ({ file, code, m }));
  });
  if (found.length !== 1)
    throw new Error(
      `build: esbuild's __name helper found ${found.length} times (expected once); update nameOnlyConstructors in scripts/build-bin.mjs`,
    );
  const [{ file, code, m }] = found;
  if (inputs[path.basename(file)].length > 0)
    throw new Error(
      `build: esbuild's __name helper shares ${file} with modules; patching it would move their source maps`,
    );
  const [whole, name, fn, value, define] = m;
  const patched = `${name}=(${fn},${value})=>${fn}.prototype===void 0?${fn}:${define}(${fn},"name",{value:${value},configurable:!0})`;
  writeFileSync(path.join(root, file), code.replace(whole, patched));
}

const bundleDir = path.join(dist, "bundle");
rmSync(bundleDir, { recursive: true, force: true });
const ownCode = new RegExp(
  `^${dist.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}${path.sep}(?!bundle${path.sep}).*\\.js$`,
);
/** A use outside comments and `typeof` guards of `__dirname`, `__filename` or `import.meta`. */
const findsItsFiles = /(?<!typeof\s+)\b(?:__dirname|__filename)\b|\bimport\.meta\b/;
const withoutComments = (code) =>
  code.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
const result = await build({
  entryPoints: [path.join(dist, "index.js")],
  absWorkingDir: root,
  outdir: bundleDir,
  entryNames: "[name]",
  chunkNames: "chunk-[hash]",
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  // Every class and constructor function keeps its .name, shortened or renamed apart from another
  // of the same name (errors named by `new.target.name`, commander's by `constructor.name`);
  // arrow and async functions do not (nameOnlyConstructors above).
  keepNames: true,
  sourcemap: "linked",
  // A trace needs the mappings, not a copy of every source.
  sourcesContent: false,
  // The dependencies are installed beside mcpx with their licenses.
  legalComments: "none",
  external: EXTERNAL,
  // CommonJS dependencies call require(); the ES module output has none of its own.
  banner: {
    js: [
      'import { createRequire as __mcpxCreateRequire } from "node:module";',
      "const require = __mcpxCreateRequire(import.meta.url);",
      'const __mcpxDist = new URL("../", import.meta.url);',
    ].join(" "),
  },
  plugins: [
    {
      name: "mcpx-urls",
      setup(b) {
        const standIns = new RegExp(`^(${Object.keys(STAND_INS).join("|")})$`);
        b.onResolve({ filter: standIns }, (args) => ({
          path: args.path,
          namespace: "mcpx-stand-in",
        }));
        b.onLoad({ filter: /.*/, namespace: "mcpx-stand-in" }, (args) => ({
          contents: STAND_INS[args.path],
          loader: "js",
        }));
        b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
          /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
            ? { path: "zod-locales", namespace: "mcpx-zod-locales" }
            : undefined,
        );
        b.onLoad({ filter: /.*/, namespace: "mcpx-zod-locales" }, () => ({
          contents: ZOD_LOCALES,
          loader: "js",
        }));
        // The path (in source maps and bundle-inputs.json) is relative; the importer finds the db.
        b.onResolve({ filter: /^mime-db$/ }, (args) => ({
          path: path.relative(root, args.importer).split(path.sep).join("/"),
          namespace: "mcpx-mime",
          pluginData: args.importer,
        }));
        b.onLoad({ filter: /.*/, namespace: "mcpx-mime" }, (args) => ({
          contents: mediaTypes(args.pluginData),
          loader: "js",
        }));
        b.onLoad({ filter: /\.[cm]?js$/ }, (args) => {
          const source = readFileSync(args.path, "utf8");
          if (ownCode.test(args.path)) {
            // mcpx's own module finds files from where tsc put it (package.json, the dashboard,
            // a worker's entry, the bin): its URL stays the one it has in dist/.
            const rel = path.relative(dist, args.path).split(path.sep).join("/");
            const url = `new URL(${JSON.stringify(rel)}, __mcpxDist).href`;
            return { contents: source.replaceAll("import.meta.url", url), loader: "js" };
          }
          const lazy = lazyGlobals(args.path, source);
          if (lazy !== undefined) return { contents: lazy, loader: "js" };
          if (findsItsFiles.test(withoutComments(source))) {
            const at = path.relative(root, args.path);
            return {
              errors: [
                {
                  text: `${at} finds files beside its own (__dirname, __filename or import.meta): bundled, it would look in dist/bundle/. Add its package to EXTERNAL in scripts/build-bin.mjs.`,
                },
              ],
            };
          }
          return undefined;
        });
      },
    },
  ],
  metafile: true,
  logLevel: "warning",
});
const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith(".js"));
// Which modules each chunk holds (paths from the package root): what a test reads to tell which
// modules a bundled mcpx loaded (test/integration/lazy-modules.test.ts), and where to look for one.
const inputs = Object.fromEntries(
  outputs.map(([file, o]) => [
    path.basename(file),
    Object.keys(o.inputs).map((i) => path.relative(root, path.resolve(root, i))),
  ]),
);
writeFileSync(path.join(dist, "bundle-inputs.json"), `${JSON.stringify(inputs, null, 1)}\n`);
nameOnlyConstructors(outputs, inputs);
const bytes = outputs.reduce((sum, [, o]) => sum + o.bytes, 0);
process.stderr.write(
  `bin: dist/mcpx.cjs ${statSync(outfile).size} B; dist/bundle/: ${outputs.length} files, ${Math.round(bytes / 1024)} KB\n`,
);
