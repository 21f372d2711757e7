/** Shapes shared by the client's parts. Wire names are snake_case; these are their camelCase forms. */

export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'restored' | 'closed';
export type Permission = 'read' | 'read_write' | 'admin';

/** The hello's limits (docs/PROTOCOL.md#the-hello-frame). */
export interface Limits {
  maxFrameBytes: number;
  maxInFlight: number;
  maxCredit: number;
  maxEntryBytes: number;
  maxBatch: number;
  maxPage: number;
  maxDocBytes: number;
  heartbeatMs: number;
}

/** What the server said in the hello of the current socket. */
export interface Hello {
  protocol: number;
  session: number;
  workspace: string;
  client: string;
  permission: Permission;
  /** When the token expires (epoch ms); null for the root token. */
  expiresAt: number | null;
  limits: Limits;
  /** The workspace URL of the server this socket is on. */
  server: string;
}

/** Options of one request. */
export interface RequestOptions {
  /** Give up after this many ms (default: the client's requestTimeoutMs). */
  timeoutMs?: number;
  /** Abort the wait: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** While the client reconnects, wait for the next socket (within the timeout) instead of failing at once with unavailable. */
  waitForReconnect?: boolean;
}

/** The internal face of the client the Log, Doc and presence handles use. */
export interface Requester {
  request<T = any>(frame: Record<string, unknown>, safe: boolean, opts?: RequestOptions,
    onOk?: (ok: any) => void): Promise<T>;
  /** Sends a frame nobody waits for (a credit grant); its failure is ignored. */
  fire(frame: Record<string, unknown>): void;
  addSubscription(sub: Resumable): void;
  removeSubscription(sub: Resumable): void;
  bindSub(id: number, handler: (frame: Record<string, any>) => void): void;
  unbindSub(id: number): void;
  hello(): Hello | null;
  readonly logCredit: number;
}

/** A subscription the client restores on every new socket. */
export interface Resumable {
  /** Subscribes again on the new socket (after a reconnect); resolves once it is back. */
  restore(): Promise<void>;
  /** The socket ended: the server's sub id means nothing now. */
  detach(): void;
  /** The client closed for good. */
  end(error?: Error): void;
}
