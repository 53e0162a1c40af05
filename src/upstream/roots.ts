/**
 * Roots an HTTP caller's client gives, held within the roots the operator configured for the
 * server: a client root inside a configured one is kept; one that contains a configured root is
 * narrowed to it; anything else (another folder, `file:///`, a non-file URI) is dropped. Paths
 * are compared after resolving symlinks where they exist, so a link inside the allowed folder
 * cannot point the upstream outside it. Pure apart from `realpath`, which tests may replace.
 */
import { realpath as fsRealpath } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Root } from "./channel.js";

type Realpath = (p: string) => Promise<string>;

/** The path of a `file://` URI, real when it exists; undefined for anything else. */
async function pathOf(uri: string, realpath: Realpath): Promise<string | undefined> {
  let p: string;
  try {
    const url = new URL(uri);
    if (url.protocol !== "file:" || (url.host !== "" && url.host !== "localhost")) return undefined;
    p = path.resolve(fileURLToPath(url));
  } catch {
    return undefined; // not a URI, or a file URI node cannot map to a path
  }
  try {
    return await realpath(p);
  } catch {
    // Not there (yet): its own path. A remote upstream's folders need not exist here.
    return p;
  }
}

/** Whether `inner` is `outer` or inside it. */
function within(inner: string, outer: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * The client's roots held within `allowed` (the server's configured roots). None configured, or
 * none left: the configured roots, the answer a client without roots gets.
 */
export async function confineRoots(
  client: readonly Root[],
  allowed: readonly Root[],
  realpath: Realpath = fsRealpath,
): Promise<Root[]> {
  const fences = (
    await Promise.all(
      allowed.map(async (root) => ({ root, path: await pathOf(root.uri, realpath) })),
    )
  ).filter((f): f is { root: Root; path: string } => f.path !== undefined);
  const kept = new Map<string, Root>();
  for (const root of client) {
    const p = await pathOf(root.uri, realpath);
    if (p === undefined) continue;
    const inside = fences.find((f) => within(p, f.path));
    if (inside) {
      const uri = pathToFileURL(p).href;
      kept.set(uri, { uri, ...(root.name !== undefined && { name: root.name }) });
      continue;
    }
    for (const f of fences) if (within(f.path, p)) kept.set(f.root.uri, f.root);
  }
  return kept.size > 0 ? [...kept.values()] : [...allowed];
}
