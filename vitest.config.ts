import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Integration tests spawn real upstream servers; the CI machine has 2 cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // A temp root per run, and a failed run if a test leaves anything in it.
    globalSetup: ["test/setup/temp-root.ts"],
    setupFiles: ["test/setup/remove-temp.ts"],
    projects: [
      {
        // Unit tests start no process of their own that outlives a test and keep no state between
        // files: they share their workers' module cache (no fresh worker per file), two at a time.
        // About a third of the suite's time was each file's worker start and imports.
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          // A file that mocks a module (vi.mock) needs a worker of its own: in a shared one the
          // module may already be loaded, unmocked, by an earlier file.
          exclude: ["test/unit/compression-schema.test.ts"],
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // Integration, end-to-end and fuzz tests start real processes and measure none of their
        // CPU: one file at a time, after the unit tests, each in a fresh worker.
        extends: true,
        test: {
          name: "processes",
          include: ["test/**/*.test.ts"],
          exclude: ["test/unit/**/!(compression-schema).test.ts"],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
