/**
 * What `mcpx` runs first (bundled by `npm run build` into `dist/mcpx.cjs`, the package's bin): a
 * client's `<config> --daemon` entry becomes the shim at once, with nothing but Node built-ins
 * loaded — a CommonJS bundle, so not even the ES module loader; every other command line goes
 * to the full CLI (`dist/bundle/index.js`, scripts/build-bin.mjs).
 */
import { shimOptions } from "./argv.js";
import { runShim } from "./shim.js";

/** Run the shim for a plain `--daemon` command line, else `fullCli()`. */
export async function launch(argv: readonly string[], fullCli: () => Promise<unknown>) {
  const options = shimOptions(argv);
  if (!options) {
    await fullCli();
    return;
  }
  process.on("unhandledRejection", (reason) => {
    process.stderr.write(`mcpx: unhandled rejection: ${String(reason)}\n`);
  });
  const code = await runShim(options);
  process.exitCode = code;
}
