#!/usr/bin/env node
/**
 * N open dashboards, as a separate process (a browser is one): each follows /api/events and,
 * like the page, fetches /api/calls at most once a second while calls flow.
 * Usage: node bench/dashboard-reader.mjs <base url> <n>. Prints "open" once every stream got
 * its first status event; runs until killed.
 */
const [base, n] = [process.argv[2], Number(process.argv[3] ?? 5)];
let open = 0;
let events = 0;

async function dashboard() {
  await fetch(`${base}/api/status`).then((r) => r.text());
  await fetch(`${base}/api/economy`).then((r) => r.text());
  const res = await fetch(`${base}/api/events`);
  if (res.status !== 200) throw new Error(`events: HTTP ${res.status}`);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let counted = false;
  let refetch;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const chunk = decoder.decode(value, { stream: true });
    if (!counted && chunk.includes("event: status")) {
      counted = true;
      if (++open === n) process.stdout.write("open\n");
    }
    const calls = chunk.split("event: call").length - 1;
    events += calls;
    if (calls > 0 && refetch === undefined) {
      refetch = setTimeout(() => {
        refetch = undefined;
        void fetch(`${base}/api/calls`).then((r) => r.text());
      }, 1000);
    }
  }
}

for (let i = 0; i < n; i++) {
  dashboard().catch((err) => {
    process.stderr.write(`dashboard reader: ${err.message}\n`);
    process.exit(1);
  });
}
process.on("SIGTERM", () => {
  process.stderr.write(`dashboard reader: ${events} call events read\n`);
  process.exit(0);
});
