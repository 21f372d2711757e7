/**
 * @hyphamesh/client: the TypeScript client of Hypha-Mesh, for browsers and Node (docs/CLIENT-JS.md).
 *
 *   const c = await HyphaClient.connect('http://127.0.0.1:8080/v1/workspaces/demo', token);
 *   await c.log('chat').append({ text: 'hi' });
 */
export { HyphaClient, workspaceBase } from './client.js';
export type { ClientOptions, TokenSupplier, CallContext, CallOptions, Handler, Registration, ServiceInfo, ServiceOptions } from './client.js';
export { HyphaError, ERROR_CODES, HTTP_STATUS } from './errors.js';
export type { ErrorCode } from './errors.js';
export { Log, LogSubscription } from './log.js';
export type { LogEntry, LogPage, LogInfo, Retention, Appended, AppendOptions, Idempotence, SubscribeOptions, LogPoint, LogRestore } from './log.js';
export { Batch } from './batch.js';
export type { BatchResult, BatchOpResult } from './batch.js';
export { Doc, DocSubscription } from './doc.js';
export type { DocValue, DocEvent, Increment, WriteOptions, DocPoint, DocRestore } from './doc.js';
export { Schedules } from './schedules.js';
export type { ScheduleAction, ScheduleTime, ScheduleInfo } from './schedules.js';
export { Presence, PresenceSubscription } from './presence.js';
export type { PresenceMember, PresenceEvent } from './presence.js';
export { Artifacts } from './artifacts.js';
export type { ArtifactInfo, ArtifactPage, ArtifactData, Download, Range, UploadOptions } from './artifacts.js';
export type { ConnectionState, Hello, Limits, Permission, RequestOptions } from './types.js';
export { Backoff } from './backoff.js';
