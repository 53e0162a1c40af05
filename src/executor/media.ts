/**
 * Content that is no text (images, audio, resource links, embedded binary resources) in code
 * mode. An inner call's media stays outside the sandbox: the script sees a small stand-in
 * (`{ type: "image", mimeType, media: "mcpx-media:1" }`) instead of kilobytes of base64, and
 * when the script's value holds a stand-in (or a block of its own with base64 `data`), the
 * answer carries that block as content of its kind, never as JSON text.
 */
import type { ContentBlock } from "../types.js";
import { isRecord } from "../json.js";

/** What a stand-in's `media` field starts with. */
const PREFIX = "mcpx-media:";

/** How deep the script's value is searched for media. */
const MAX_DEPTH = 32;

/** Media blocks one answer carries at most; past it they stay as stand-ins in the JSON. */
const MAX_BLOCKS = 100;

type Node = { [key: string]: unknown };

/** The media of one script run: inner calls' blocks kept by handle, looked up in its value. */
export class ScriptMedia {
  private readonly kept: ContentBlock[] = [];

  /**
   * The block as the script sees it: base64 data (image, audio, a blob resource) is kept here
   * and stands in as a handle; text and resource links are small and pass as they are.
   */
  stash(block: ContentBlock): ContentBlock {
    const data = carriesData(block);
    if (!data) return block;
    this.kept.push(block);
    const handle = `${PREFIX}${this.kept.length}`;
    if (block.type === "resource") {
      const { blob: _kept, ...resource } = block.resource as Node;
      return { type: "resource", resource: { ...resource, media: handle } };
    }
    const { data: _kept, ...rest } = block;
    return { ...rest, media: handle };
  }

  /**
   * The script's value with its media taken out: the blocks (in the order first met, each
   * once) and the value left for the text, undefined when the value was only media. A stand-in
   * stays in that text (the model sees where its block was); a block the script built with its
   * own base64 `data` is replaced by a stand-in naming its place.
   */
  extract(value: unknown): { blocks: ContentBlock[]; rest: unknown } {
    const blocks: ContentBlock[] = [];
    const placed = new Map<string, ContentBlock>();
    const take = (node: Node): Node | undefined => {
      const handle = handleOf(node);
      if (handle !== undefined) {
        const block = this.kept[Number(handle.slice(PREFIX.length)) - 1];
        if (!block) return undefined;
        if (!placed.has(handle) && blocks.length < MAX_BLOCKS) {
          placed.set(handle, block);
          blocks.push(block);
        }
        return node;
      }
      if (isOwnMedia(node) && blocks.length < MAX_BLOCKS) {
        blocks.push(node as ContentBlock);
        const { data: _sent, ...rest } = node;
        return { ...rest, media: `content block ${blocks.length}` };
      }
      return undefined;
    };
    const visit = (node: unknown, depth: number): unknown => {
      if (depth > MAX_DEPTH || typeof node !== "object" || node === null) return node;
      if (Array.isArray(node)) {
        let changed = false;
        const out = node.map((m) => {
          const v = visit(m, depth + 1);
          if (v !== m) changed = true;
          return v;
        });
        return changed ? out : node;
      }
      const object = node as Node;
      const replaced = take(object);
      if (replaced) return replaced;
      let out: Node | undefined;
      for (const [k, v] of Object.entries(object)) {
        const r = visit(v, depth + 1);
        if (r === v) continue;
        out ??= { ...object };
        out[k] = r;
      }
      return out ?? node;
    };
    const rest = visit(value, 0);
    // A value that is one media block (or a list of them) is answered as the blocks alone.
    const only = (v: unknown) => isRecord(v) && (handleOf(v) !== undefined || isOwnMediaStandIn(v));
    const onlyMedia = blocks.length > 0 && (Array.isArray(rest) ? rest.every(only) : only(rest));
    return { blocks, rest: onlyMedia ? undefined : rest };
  }
}

function carriesData(block: ContentBlock): boolean {
  if ((block.type === "image" || block.type === "audio") && typeof block.data === "string")
    return true;
  return (
    block.type === "resource" && isRecord(block.resource) && typeof block.resource.blob === "string"
  );
}

/** The handle of a stand-in (an image, audio or blob resource the script got from a call). */
function handleOf(node: Node): string | undefined {
  const media = isRecord(node.resource) ? node.resource.media : node.media;
  return typeof media === "string" && media.startsWith(PREFIX) ? media : undefined;
}

/** A block the script built: an image or audio with base64 data, or a resource link. */
function isOwnMedia(node: Node): boolean {
  if (node.type === "image" || node.type === "audio")
    return typeof node.data === "string" && typeof node.mimeType === "string";
  return (
    node.type === "resource_link" && typeof node.uri === "string" && typeof node.name === "string"
  );
}

function isOwnMediaStandIn(node: Node): boolean {
  if (node.type === "resource_link") return typeof node.uri === "string";
  return (
    (node.type === "image" || node.type === "audio") &&
    typeof node.media === "string" &&
    node.media.startsWith("content block ")
  );
}
