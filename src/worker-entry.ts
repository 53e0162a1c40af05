/**
 * Where a worker thread of mcpx starts: the built `.js` file beside the caller's module, or, run
 * from source (tests, bench), an eval'd entry that first registers tsx, the TypeScript loader the
 * dev tooling already uses.
 */
export function workerEntry(self: string, name: string): { filename: string | URL; eval: boolean } {
  if (!self.endsWith(".ts")) return { filename: new URL(`./${name}.js`, self), eval: false };
  const tsx = JSON.stringify(import.meta.resolve("tsx/esm/api"));
  const entry = JSON.stringify(new URL(`./${name}.ts`, self).href);
  return {
    filename: `import(${tsx}).then((m) => { m.register(); return import(${entry}); })`,
    eval: true,
  };
}
