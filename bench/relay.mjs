#!/usr/bin/env node
/**
 * The floor of any stdio proxy, for the speed bench: starts `node <args>` and copies bytes both
 * ways (its stdin to the child's, the child's stdout to its own), parsing nothing. What it adds
 * over a direct client is the second process hop alone: two pipe writes and two wake-ups.
 */
import { spawn } from "node:child_process";

const child = spawn(process.execPath, process.argv.slice(2), {
  stdio: ["pipe", "pipe", "inherit"],
});
process.stdin.on("data", (chunk) => child.stdin.write(chunk));
process.stdin.on("end", () => child.stdin.end());
child.stdout.on("data", (chunk) => process.stdout.write(chunk));
child.on("exit", (code) => process.exit(code ?? 0));
