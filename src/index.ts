#!/usr/bin/env node
/**
 * The mcpx command: parse the command line and dispatch to src/commands/. Exit codes: 0
 * success, 1 the command failed, 2 bad command line or config (see EXIT_CODES in cli-help.ts).
 */
import { parseCommandLine, UsageError, type Invocation } from "./cli.js";
import { errorMessage } from "./errors.js";
import { systemClock } from "./clock.js";
import { tuneForServing } from "./heap.js";

async function main(): Promise<number | undefined> {
  let invocation: Invocation;
  try {
    invocation = parseCommandLine(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`mcpx: ${err.message}\n  ${err.fix}\n`);
    return 2;
  }
  // Each command loads only what it needs: serving never loads the tokenizer or the diff library.
  switch (invocation.command) {
    case "output":
      // --help and --version: the only output the proxy command ever writes to stdout.
      process.stdout.write(
        invocation.text.endsWith("\n") ? invocation.text : `${invocation.text}\n`,
      );
      return 0;
    case "serve":
      // A client's `--daemon` entry is a thin shim: it must not load the proxy.
      if (invocation.options.daemon) {
        return (await import("./daemon/shim.js")).runShim(invocation.options);
      }
      {
        // A stdio client gets its `initialize` answered while the proxy loads.
        const stdio = invocation.options.port === undefined && !invocation.options.daemonRun;
        const front = stdio ? await import("./server/early.js") : undefined;
        const early = front?.earlyAllowed(invocation.options.config)
          ? front.earlyStdio()
          : undefined;
        const code = await (await import("./commands/serve.js")).serve(invocation.options, early);
        if (code !== undefined) early?.stop();
        // Once serving: set while the proxy's modules load, the bound on heap growth made V8
        // collect the whole heap at every 20 % of its growth from nothing (a tenth of start-up CPU).
        else tuneForServing(systemClock);
        return code;
      }
    case "daemon":
      if (invocation.options.action === "run") tuneForServing(systemClock);
      return (await import("./commands/daemon.js")).daemon(invocation.options);
    case "import":
      return (await import("./commands/import.js")).importConfig(invocation.options);
    case "install":
      return (await import("./commands/install.js")).install(invocation.options);
    case "uninstall":
      return (await import("./commands/uninstall.js")).uninstall(invocation.options);
    case "trust":
      return (await import("./commands/trust.js")).trust(invocation.options);
    case "validate":
      return (await import("./commands/validate.js")).validate(invocation.options);
    case "stats":
      return (await import("./commands/stats.js")).stats(invocation.options);
    case "login":
      return (await import("./commands/login.js")).login(invocation.options);
    case "logout":
      return (await import("./commands/logout.js")).logout(invocation.options);
    default:
      return invocation satisfies never;
  }
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`mcpx: fatal: ${errorMessage(err)}\n`);
    process.exit(1);
  },
);

// No input may crash the proxy: a stray rejection is a bug to log, not a reason to drop every client.
process.on("unhandledRejection", (reason) => {
  process.stderr.write(`mcpx: unhandled rejection: ${errorMessage(reason)}\n`);
});
