/**
 * The conformance fixture upstream (test/fixtures/upstreams/conformance.mjs) serves what the
 * conformance suite reads through mcpx — resource URIs, prompt names, completion — to a client of
 * either era, so a scenario that fails under `npm run conformance` fails because of mcpx.
 */
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterEach, describe, expect, it } from "vitest";
import { ERAS, newClient } from "../helpers/clients.js";
import { FIXTURES } from "../helpers/proxy.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe.each(ERAS)("the conformance fixture, to a %s client", (era) => {
  it("lists and reads the suite's resources, gets its prompts and completes", async () => {
    const client = newClient(era);
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [`${FIXTURES}/conformance.mjs`],
        stderr: "ignore",
      }),
    );
    closers.push(() => client.close());
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([
      "test://static-binary",
      "test://static-text",
      "test://watched-resource",
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["test://template/{id}/data"]);
    const textRead = await client.readResource({ uri: "test://static-text" });
    expect(textRead.contents[0]).toMatchObject({
      uri: "test://static-text",
      mimeType: "text/plain",
    });
    const binary = await client.readResource({ uri: "test://static-binary" });
    expect(binary.contents[0]).toMatchObject({ mimeType: "image/png" });
    const templated = await client.readResource({ uri: "test://template/123/data" });
    const data = templated.contents[0] as { text: string };
    expect(JSON.parse(data.text)).toMatchObject({ id: "123", templateTest: true });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([
      "test_prompt_with_arguments",
      "test_prompt_with_embedded_resource",
      "test_prompt_with_image",
      "test_simple_prompt",
    ]);
    const withArgs = await client.getPrompt({
      name: "test_prompt_with_arguments",
      arguments: { arg1: "a", arg2: "b" },
    });
    expect(withArgs.messages[0]?.content).toEqual({
      type: "text",
      text: "Prompt with arguments: arg1='a', arg2='b'",
    });
    const completion = await client.complete({
      ref: { type: "ref/prompt", name: "test_prompt_with_arguments" },
      argument: { name: "arg1", value: "t" },
    });
    expect(completion.completion.values).toEqual([]);
  });
});
