/**
 * Token economy figures beyond the github corpus: describe answers on six other real servers'
 * recorded catalogs, describe("server") signatures, result encoding per payload shape, and tool
 * search quality and latency. Part of `npm run bench -- tokens`.
 */
import { measureSchema } from "./schema.js";
import {
  OTHERS,
  measureSearch,
  measureShapes,
  measureSignatures,
  type EconomyInput,
} from "./economy-measure.js";
import { renderEconomy, type Economy } from "./economy-render.js";

export async function measureEconomy(input: EconomyInput): Promise<Economy> {
  const others = await measureSchema(input.proxy, OTHERS, input.toolsOf);
  const signatures = await measureSignatures(
    input.proxy,
    [...input.servers, ...OTHERS],
    input.toolsOf,
  );
  const shapes = measureShapes();
  const search = measureSearch(
    input.servers.map((s) => ({ server: s, tools: input.toolsOf(s) })),
    [...input.servers, ...OTHERS].map((s) => ({
      server: s,
      tools: input.toolsOf(s),
    })),
  );
  return renderEconomy(input, others, signatures, shapes, search);
}
