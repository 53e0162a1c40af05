/**
 * The page's files, built by `npm run build` from web/ into dist/web (web/build.mjs) and read
 * from there once. Nothing is fetched from anywhere else: no CDN, no external network.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export interface Asset {
  type: string;
  body: Buffer;
}

/** The files the page is made of; nothing else is served from the folder. */
const FILES: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};

/**
 * dist/web beside the running code: `../web` from dist/dashboard, `../../dist/web` from
 * src/dashboard (tests that import the sources after a build).
 */
function webDir(): string | undefined {
  for (const rel of ["../web/", "../../dist/web/"]) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(`${dir}index.html`)) return dir;
  }
  return undefined;
}

export class Assets {
  private readonly cache = new Map<string, Asset>();
  private dir: string | undefined;

  /** A page file by name, or undefined when it is not one (or the page was not built). */
  get(name: string): Asset | undefined {
    // Own keys only: `constructor` or `__proto__` are names of every object, not files.
    if (!Object.hasOwn(FILES, name)) return undefined;
    const type = FILES[name]!;
    let asset = this.cache.get(name);
    if (!asset) {
      this.dir ??= webDir();
      if (this.dir === undefined) return undefined;
      asset = { type, body: readFileSync(`${this.dir}${name}`) };
      this.cache.set(name, asset);
    }
    return asset;
  }
}
