/** Loading a config the way every command does: its format, its project, its trust. */
import type { SourceOptions } from "../cli.js";
import type { LoadOptions } from "../config/load.js";
import type { Config } from "../config/load.js";
import { assertPublicServers } from "../config/trust.js";

export { isUntrustedRefusal } from "../config/trust.js";

export function loadOptions(o: SourceOptions): LoadOptions {
  return {
    ...(o.format && { format: o.format }),
    ...(o.project !== undefined && { project: o.project }),
    untrusted: o.untrusted,
  };
}

/** An untrusted config's hosts, resolved now: each must be public. Throws the refusal. */
export function checkUntrusted(config: Config): Promise<void> {
  return assertPublicServers(config);
}
