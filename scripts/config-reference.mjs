#!/usr/bin/env node
/**
 * Writes docs/config-reference.md and schema/mcpx.schema.json from the config's zod schema
 * (src/config/schema.ts, through dist/: `npm run docs:config` builds first). A test fails when
 * either file differs from what this writes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SCHEMA_FILE, configJsonSchema } from "../dist/config/json-schema.js";
import { REFERENCE_FILE, configReference } from "../dist/config/reference.js";

const root = fileURLToPath(new URL("..", import.meta.url));
for (const [file, text] of [
  [SCHEMA_FILE, `${JSON.stringify(configJsonSchema(), null, 2)}\n`],
  [REFERENCE_FILE, configReference()],
]) {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
  process.stderr.write(`wrote ${file}\n`);
}
