// @ts-check
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

/** Only these files may import the MCP SDK: src/upstream/ (everything about one upstream server) and src/server/. */
const UPSTREAM_SDK_IMPORTERS = ["src/upstream/**/*.ts"];

const SDK_PATTERN = {
  group: ["@modelcontextprotocol/*", "@modelcontextprotocol/*/**"],
  message: "Only src/upstream/ and src/server/ import the MCP SDK packages.",
};

/** Import patterns of `name` from any file of src/: a folder (`server`) or a root module (`proxy.js`). */
function target(name) {
  return name.endsWith(".js")
    ? [`./${name}`, `../${name}`, `../../${name}`]
    : [`./${name}/**`, `../${name}/**`, `../../${name}/**`];
}

/*
 * The layers of src/, top to bottom: index → commands → cli → proxy → telemetry → dashboard → server →
 * executor | health → economy → compression → registry → upstream → shared → config → leaves;
 * auth (bearer tokens, Host and Origin checks) sits on config for the server, the dashboard and serve; the
 * sandbox is a leaf of its own (its block below). Each layer lists what it may not import:
 * everything above it, and siblings it does not need. Import cycles, type-only ones included, are
 * dependency-cruiser's (.dependency-cruiser.json, run by `npm run lint`).
 */
const CLI = ["cli.js", "cli-commands.js", "cli-options.js", "cli-help.js"];
const ENTRY = ["index.js", ...CLI, "commands", "proxy.js"];
const ABOVE_SERVER = [...ENTRY, "dashboard", "telemetry"];
const ABOVE_EXECUTOR = [...ABOVE_SERVER, "server"];
const ABOVE_REGISTRY = [
  ...ABOVE_EXECUTOR,
  "executor",
  "health",
  "economy",
  "compression",
  "sandbox",
  "auth",
];
const ABOVE_CONFIG = [...ABOVE_REGISTRY, "registry", "upstream"];
const LAYERS = [
  // index.ts only parses the command line and dispatches to a command.
  {
    files: ["src/index.ts"],
    forbid: ["proxy.js", "dashboard", "server", "executor", "registry", "upstream"],
  },
  { files: ["src/commands/**/*.ts"], forbid: ["index.js"] },
  {
    files: ["src/cli.ts", "src/cli-*.ts"],
    forbid: ABOVE_CONFIG.filter((n) => !CLI.includes(n)),
  },
  {
    files: ["src/proxy.ts"],
    forbid: ["index.js", ...CLI, "commands", "dashboard"],
  },
  // Traces and metrics (issue 29): read the proxy through its hooks, mount /metrics beside the
  // dashboard (whose sign-in rules they share); loaded only when telemetry is on.
  { files: ["src/telemetry/**/*.ts"], forbid: ENTRY },
  { files: ["src/dashboard/**/*.ts"], forbid: [...ENTRY, "telemetry"] },
  { files: ["src/server/**/*.ts"], forbid: ABOVE_SERVER, sdk: true },
  { files: ["src/executor/**/*.ts"], forbid: [...ABOVE_EXECUTOR, "health", "economy"] },
  {
    files: ["src/health/**/*.ts"],
    forbid: [...ABOVE_EXECUTOR, "executor", "economy", "compression", "sandbox"],
  },
  {
    files: ["src/economy/**/*.ts"],
    forbid: [...ABOVE_EXECUTOR, "executor", "health", "compression", "sandbox", "upstream"],
  },
  {
    files: ["src/compression/**/*.ts"],
    forbid: [...ABOVE_REGISTRY.filter((n) => n !== "compression"), "registry", "upstream"],
  },
  { files: ["src/registry/**/*.ts"], forbid: ABOVE_REGISTRY },
  { files: ["src/upstream/**/*.ts"], forbid: [...ABOVE_REGISTRY, "registry"], sdk: "upstream" },
  // Bearer tokens, Host and Origin checks, throttling: shared by server/http.ts and the dashboard.
  { files: ["src/auth/**/*.ts"], forbid: ABOVE_CONFIG.filter((n) => n !== "auth") },
  // The --daemon shim and what the daemon's socket shares with it: Node built-ins and leaves only
  // (the shim must load no SDK, proxy or config code: test/integration/daemon.test.ts).
  { files: ["src/daemon/**/*.ts"], forbid: [...ABOVE_CONFIG, "config", "logfile.js", "shared"] },
  // State the replicas share (issue 31): in this process, or Redis (ioredis, loaded lazily).
  // Used by upstream and everything above; it reads only leaves.
  { files: ["src/shared/**/*.ts"], forbid: [...ABOVE_CONFIG, "config", "logfile.js"] },
  { files: ["src/config/**/*.ts", "src/logfile.ts"], forbid: [...ABOVE_CONFIG, "shared"] },
  {
    files: [
      "src/{errors,json,logger,types,version,limits,ring,clock,percentile,fair-queue,worker-entry,traceparent,state-dir,heap,install}.ts",
    ],
    forbid: [...ABOVE_CONFIG, "config", "logfile.js", "shared"],
  },
];

/** One no-restricted-imports block per layer (a later block for a file replaces an earlier one). */
function layering() {
  return LAYERS.flatMap(({ files, forbid, sdk }) => {
    const rules = (extra) => ({
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: forbid.flatMap(target),
              message: `Dependencies point one way (eslint.config.js, LAYERS): this layer never imports ${forbid.join(", ")}.`,
            },
            ...extra,
          ],
        },
      ],
    });
    if (sdk === true) return [{ files, rules: rules([]) }];
    if (sdk === "upstream") {
      return [
        { files, ignores: UPSTREAM_SDK_IMPORTERS, rules: rules([SDK_PATTERN]) },
        { files: UPSTREAM_SDK_IMPORTERS, rules: rules([]) },
      ];
    }
    return [{ files, rules: rules([SDK_PATTERN]) }];
  });
}

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "test/fixtures/corpus/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "test/fixtures/upstreams/*.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
      "no-console": "error",
    },
  },
  ...layering(),
  {
    // Code mode's sandbox is a leaf the executor calls through its index: no SDK, and nothing
    // of the rest of src but the errors and logger leaves.
    files: ["src/sandbox/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "../*",
                "!../errors.js",
                "!../logger.js",
                "!../fair-queue.js",
                "!../worker-entry.js",
              ],
              message:
                "src/sandbox is a leaf: from the rest of src it imports only the errors, logger, fair-queue and worker-entry leaves.",
            },
            {
              group: ["@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*"],
              message: "Only src/upstream/ and src/server/ import the SDK.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["test/**", "bench/**", "*.js"],
    rules: { "no-console": "off" },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
