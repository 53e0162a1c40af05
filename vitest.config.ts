import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Integration tests spawn real upstream servers; the CI machine has 2 cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // A temp root per run, and a failed run if a test leaves anything in it.
    globalSetup: ["test/setup/temp-root.ts"],
    setupFiles: ["test/setup/remove-temp.ts"],
  },
});
