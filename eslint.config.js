// @ts-check
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

/** Only these files may import the MCP SDK: src/upstream/ (everything about one upstream server) and src/server/. */
const UPSTREAM_SDK_IMPORTERS = ["src/upstream/**/*.ts"];
const SDK_IMPORTERS = [...UPSTREAM_SDK_IMPORTERS, "src/server/**"];

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "test/fixtures/corpus/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: globals.node,
      parserOptions: {
        projectService: { allowDefaultProject: ["*.js", "test/fixtures/upstreams/*.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", destructuredArrayIgnorePattern: "^_" },
      ],
      "no-console": "error",
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: SDK_IMPORTERS,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["@modelcontextprotocol/*", "@modelcontextprotocol/*/**"],
              message: "Only src/upstream/ and src/server/ import the MCP SDK packages.",
            },
          ],
        },
      ],
    },
  },
  {
    // Dependency direction: index → proxy → server → executor → registry; config, errors, logger are leaves.
    files: [
      "src/registry/**/*.ts",
      "src/compression/**/*.ts",
      "src/config/**/*.ts",
      "src/health/**/*.ts",
      "src/json.ts",
    ],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: ["**/server/*", "**/executor/*", "**/proxy.js", "**/index.js"],
              message: "Lower layers never import upper layers.",
            },
            {
              group: ["@modelcontextprotocol/*", "@modelcontextprotocol/*/**"],
              message: "Only src/upstream/ and src/server/ import the MCP SDK packages.",
            },
          ],
        },
      ],
    },
  },
  {
    files: UPSTREAM_SDK_IMPORTERS,
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "**/server/*",
                "**/executor/*",
                "**/registry/*",
                "**/proxy.js",
                "**/index.js",
              ],
              message:
                "src/upstream/ is below the registry: it never imports the registry or upper layers.",
            },
          ],
        },
      ],
    },
  },
  {
    // Code mode's sandbox is a leaf the executor calls through its index: no SDK, and nothing
    // of the rest of src but the errors and logger leaves.
    files: ["src/sandbox/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              group: [
                "../*",
                "!../errors.js",
                "!../logger.js",
                "!../fair-queue.js",
                "!../worker-entry.js",
              ],
              message:
                "src/sandbox is a leaf: from the rest of src it imports only the errors, logger, fair-queue and worker-entry leaves.",
            },
            {
              group: ["@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/*"],
              message: "Only src/upstream/ and src/server/ import the SDK.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ["test/**", "bench/**", "*.js"],
    rules: { "no-console": "off" },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
);
