/** The part of oidc-provider 9 (no bundled types) that test/helpers/oidc.ts uses. */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http";

  export interface KoaContextWithOIDC {
    oidc: { params?: Record<string, unknown> };
  }
  export type Configuration = Record<string, unknown>;
  interface GrantInstance {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }
  interface GrantModel {
    new (init: { accountId: string; clientId: string }): GrantInstance;
    find(id: string): Promise<GrantInstance | undefined>;
  }
  interface InteractionDetails {
    prompt: { name: string };
    params: Record<string, unknown>;
    grantId?: string;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    Grant: GrantModel;
    RefreshToken: unknown;
    AccessToken: unknown;
    AuthorizationCode: unknown;
    on(event: string, listener: (...args: never[]) => void): this;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }
}
