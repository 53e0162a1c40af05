/** Resource-template matching with the SDK's own matcher (src/upstream/ is where the SDK is imported). */
import { UriTemplate } from "@modelcontextprotocol/client";

/**
 * Whether `uri` matches an RFC 6570 resource template (`file:///{path}`, `users/{id}{?page}`),
 * per the SDK's matcher, which is what SDK servers route reads with. A template that does not
 * parse matches nothing.
 */
export function matchesUriTemplate(template: string, uri: string): boolean {
  try {
    return new UriTemplate(template).match(uri) !== null;
  } catch {
    return false;
  }
}
