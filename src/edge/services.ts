import type { GraphqlAuthenticator } from '../auth/authenticate.ts';
import type { BuiltinIdentityProvider } from '../auth/builtin-idp.ts';
import type { BackendStatus } from '../observability/backend-health.ts';
import type { PoolReport } from '../observability/pool-report.ts';
import type { AccountService } from '../services/account.service.ts';
import type { AdminService } from '../services/admin.service.ts';
import type { ApiKeyService } from '../services/api-key.service.ts';
import type { AuditService } from '../services/audit.service.ts';
import type { CatalogueService } from '../services/catalogue.service.ts';
import type { ContentDeletionService } from '../services/content-deletion.service.ts';
import type { GenerationService } from '../services/generation.service.ts';
import type { LibraryService } from '../services/library.service.ts';
import type { McpConnectionService } from '../services/mcp-connection.service.ts';
import type { MediaService } from '../services/media.service.ts';
import type { ResultService } from '../services/result.service.ts';
import type { UploadService } from '../services/upload.service.ts';
import type { UsageService } from '../services/usage.service.ts';
import type { VoiceService } from '../services/voice.service.ts';
import type { WebhookService } from '../services/webhook.service.ts';

/** The use cases the edges may call; built once by the composition root (app.ts). */
export interface Services {
  readonly graphqlAuth: GraphqlAuthenticator;
  /** The built-in identity provider; null when an external issuer is configured. */
  readonly identityProvider: BuiltinIdentityProvider | null;
  readonly accounts: AccountService;
  readonly apiKeys: ApiKeyService;
  readonly catalogue: CatalogueService;
  readonly library: LibraryService;
  readonly voices: VoiceService;
  readonly uploads: UploadService;
  readonly generations: GenerationService;
  readonly results: ResultService;
  /** Deleting the account's finished generations and their media. */
  readonly deletions: ContentDeletionService;
  readonly media: MediaService;
  readonly mcpConnections: McpConnectionService;
  readonly webhooks: WebhookService;
  readonly audit: AuditService;
  /** Admin accounts only: accounts, credits and tasks across the service. */
  readonly admin: AdminService;
  /** Usage reports: an account's own, an admin's of everyone (GraphQL, CSV, command line). */
  readonly usage: UsageService;
  /** True when the database answers and every migration is applied (`/readyz`). */
  ready(): Promise<boolean>;
  /** The model servers configured models call, and how their calls went (`/readyz` detail). */
  backends(): readonly BackendStatus[];
  /** Each pool's backends: health, runs in flight, queue (`/readyz` detail, admins' catalogue). */
  pools(): Promise<readonly PoolReport[]>;
}
