/**
 * The JavaScript evaluated in each fresh context before the script: it builds `servers` and
 * `console` from the names the host allows and three native functions that only its closures
 * hold (no global name reaches them), and hands back the helpers the engine needs to read the
 * script's result. It captures the built-ins it uses first, so a script that replaces
 * `JSON.stringify` or `Promise.prototype.then` only changes its own behaviour, never the bridge.
 */

/** The file name the prelude's frames carry; position mapping skips them. */
export const PRELUDE_FILE = "mcpx-bridge.js";

/**
 * Evaluates to `install(descriptionJson, hostCall, hostLog) → [encode, describe]`:
 * - `hostCall(server, tool, argsJson)` → a promise of the result's JSON text, or rejected with the
 *   failure's text;
 * - `hostLog(line)` records one console line;
 * - `encode(value)` → the value's JSON text, `undefined`, or a thrown `TypeError`;
 * - `describe(error)` → JSON text `{ name, message, stack, server?, tool? }` or `{ thrown }`.
 */
export const PRELUDE = String.raw`(function install(descriptionJson, hostCall, hostLog) {
  "use strict";
  const { create, freeze, defineProperty, keys } = Object;
  const { stringify, parse } = JSON;
  const apply = Reflect.apply;
  const then = Promise.prototype.then;
  const isIdentifier = (name) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const StringCtor = String;

  const ref = (server, tool) =>
    "servers" + (isIdentifier(server) ? "." + server : "[" + stringify(server) + "]") +
    (isIdentifier(tool) ? "." + tool : "[" + stringify(tool) + "]");

  function callTool(server, tool, args) {
    // Created here, while the script's frame is on the stack, so a failure names its line.
    const site = new ErrorCtor();
    let json;
    try {
      json = args === undefined ? "{}" : stringify(args);
    } catch (e) {
      throw new TypeErrorCtor(ref(server, tool) + "(args): args must be JSON data (" + StringCtor(e && e.message) + ")");
    }
    if (json === undefined) {
      throw new TypeErrorCtor(ref(server, tool) + "(args): args must be JSON data, not a " + typeof args);
    }
    const fail = (message) => {
      site.name = "ToolCallError";
      site.message = message;
      defineProperty(site, "server", { value: server, enumerable: true });
      defineProperty(site, "tool", { value: tool, enumerable: true });
      throw site;
    };
    return apply(then, hostCall(server, tool, json), [(text) => parse(text), fail]);
  }

  const description = parse(descriptionJson);
  const servers = create(null);
  for (const server of keys(description)) {
    const api = create(null);
    for (const tool of description[server]) {
      // A named arrow: stack frames show the tool, and it cannot be used with new.
      const fn = { [tool]: (args) => callTool(server, tool, args) }[tool];
      defineProperty(api, tool, { value: fn, enumerable: true });
    }
    defineProperty(servers, server, { value: freeze(api), enumerable: true });
  }
  defineProperty(globalThis, "servers", { value: freeze(servers) });

  function format(value) {
    if (typeof value === "string") return value;
    try {
      if (value instanceof ErrorCtor) return StringCtor(value.name) + ": " + StringCtor(value.message);
      const json = stringify(value);
      return json === undefined ? StringCtor(value) : json;
    } catch {
      try {
        return StringCtor(value);
      } catch {
        return "[value that cannot be printed]";
      }
    }
  }
  const writer = (prefix) => (...values) => {
    let line = prefix;
    for (let i = 0; i < values.length; i++) line += (i === 0 ? "" : " ") + format(values[i]);
    hostLog(line);
  };
  const consoleObject = freeze({
    log: writer(""),
    info: writer(""),
    debug: writer(""),
    warn: writer("[warn] "),
    error: writer("[error] "),
  });
  defineProperty(globalThis, "console", { value: consoleObject });

  const encode = (value) => stringify(value);
  function describe(error) {
    try {
      if (error instanceof ErrorCtor) {
        return stringify({
          name: StringCtor(error.name),
          message: StringCtor(error.message),
          stack: StringCtor(error.stack === undefined ? "" : error.stack),
          server: typeof error.server === "string" ? error.server : undefined,
          tool: typeof error.tool === "string" ? error.tool : undefined,
        });
      }
      return stringify({ thrown: format(error) });
    } catch {
      return '{"thrown":"(an error that cannot be read)"}';
    }
  }
  return [encode, describe];
})`;
