/**
 * The last line of defence against leaked upstreams: one tiny `/bin/sh` per mcpx that ends every
 * upstream process group when mcpx dies, however it dies (SIGKILL, OOM kill, a crash), which no
 * handler inside mcpx can do. No SDK import.
 */
import { spawn, type ChildProcess } from "node:child_process";

/**
 * Reads `+<pgid>` / `-<pgid>` lines from stdin, the pipe from mcpx. EOF means mcpx is gone (the
 * kernel closes the pipe whatever killed it): SIGTERM every group still registered, poll until
 * they are gone for at most $1 ticks of 100 ms, then SIGKILL what is left, and exit. Groups that
 * are gone already cost nothing. Only digits are accepted as ids, so a stray line cannot make it
 * signal anything else (a bare "-" would mean every process we may signal).
 */
const SCRIPT = `
groups=" "
while IFS= read -r line; do
  id=\${line#?}
  case $id in ''|*[!0-9]*) continue ;; esac
  case $line in
    +*) groups="$groups$id " ;;
    -*) case $groups in *" $id "*) groups="\${groups%%" $id "*} \${groups#*" $id "}" ;; esac ;;
  esac
done
[ "$groups" = " " ] && exit 0
for g in $groups; do kill -s TERM -- "-$g" 2>/dev/null; done
i=0
while [ "$i" -lt "$1" ]; do
  alive=
  for g in $groups; do kill -s 0 -- "-$g" 2>/dev/null && alive="$alive $g"; done
  [ -z "$alive" ] && exit 0
  groups=$alive
  sleep 0.1 2>/dev/null || sleep 1
  i=$((i + 1))
done
for g in $groups; do kill -s KILL -- "-$g" 2>/dev/null; done
`;

/** Its argv[0]: how `ps` and tests tell the watchdog from an upstream. */
export const WATCHDOG_NAME = "mcpx-watchdog";

/**
 * Owns the watchdog process: started with the first group, told about every group that starts
 * and ends, ended by close(). It runs in a session and process group of its own, so signals
 * aimed at mcpx's group (Ctrl-C, a supervisor's SIGTERM) do not reach it, and it exits on EOF, so
 * it never outlives mcpx. Neither it nor its pipe keeps mcpx's event loop alive.
 */
export class Watchdog {
  private child: ChildProcess | undefined;
  private readonly groups = new Set<number>();
  private closed = false;
  /** Set when /bin/sh cannot be started: nothing more is tried. */
  private unavailable = false;

  constructor(private readonly killGraceMs = 2_000) {}

  /** End this process group if mcpx dies before unwatch(). */
  watch(pgid: number): void {
    if (this.closed) return;
    this.groups.add(pgid);
    this.send(`+${pgid}\n`);
  }

  /** The group ended: forget it, so its id is never signalled once the OS reuses it. */
  unwatch(pgid: number): void {
    if (!this.groups.delete(pgid)) return;
    this.send(`-${pgid}\n`);
  }

  /**
   * Stop the watchdog: EOF on its pipe. It ends any group still registered (none after a clean
   * shutdown) and exits; resolves once it has.
   */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else {
        child.once("exit", () => resolve());
        child.once("error", () => resolve());
      }
    });
    // Unref'd while it guards; waiting for its exit must keep the event loop alive, or a command
    // that awaits close() (stats, validate --connect) ends before its output is written.
    child.ref();
    child.stdin?.end();
    await exited;
  }

  private send(line: string): void {
    if (process.platform === "win32" || this.unavailable) return;
    if (this.child) this.child.stdin?.write(line);
    // A fresh watchdog is told every registered group at once, this one included.
    else if (this.groups.size > 0) this.start();
  }

  private start(): void {
    const ticks = String(Math.max(1, Math.ceil(this.killGraceMs / 100)));
    const child = spawn("/bin/sh", ["-c", SCRIPT, WATCHDOG_NAME, ticks], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
    child.once("error", () => {
      this.unavailable = true;
      if (this.child === child) this.child = undefined;
    });
    child.once("exit", () => {
      if (this.child !== child) return;
      this.child = undefined;
      // Killed from outside while groups run: a new one takes over at once.
      if (!this.closed && !this.unavailable && this.groups.size > 0) this.start();
    });
    // EPIPE after the watchdog died: the exit handler above replaces it.
    child.stdin?.on("error", () => {});
    child.unref();
    (child.stdin as { unref?: () => void } | null)?.unref?.();
    this.child = child;
    child.stdin?.write([...this.groups].map((g) => `+${g}\n`).join(""));
  }
}
