// Thin typing shim over ocpp-rpc (TOOLCHAIN §2): its typings mark every client option required and type
// call() as unknown. The simulator only needs this narrow surface.
import { RPCClient as RawClient, RPCServer as RawServer, createRPCError as rawCreateRPCError } from 'ocpp-rpc';

export interface CallHandlerArgs {
  method: string;
  params: any;
  messageId?: string;
  signal?: AbortSignal;
}

export interface SimRpcClient {
  readonly state: number;
  readonly protocol: string | undefined;
  connect(): Promise<unknown>;
  call(method: string, params?: unknown, options?: { callTimeoutMs?: number; signal?: AbortSignal }): Promise<any>;
  handle(handler: (args: CallHandlerArgs) => Promise<unknown>): void;
  handle(method: string, handler: (args: CallHandlerArgs) => Promise<unknown>): void;
  close(options?: { code?: number; reason?: string; awaitPending?: boolean; force?: boolean }): Promise<unknown>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  once(event: string, listener: (...args: any[]) => void): unknown;
  removeAllListeners(event?: string): unknown;
}

export interface SimRpcClientOptions {
  endpoint: string;
  identity: string;
  password?: string | undefined;
  protocols: string[];
  strictMode: boolean;
  callTimeoutMs: number;
  reconnect: boolean;
  pingIntervalMs?: number;
  headers?: Record<string, string>;
  wsOpts?: Record<string, unknown>;
}

export function createRpcClient(opts: SimRpcClientOptions): SimRpcClient {
  const { password, ...rest } = opts;
  return new (RawClient as any)({ ...rest, ...(password !== undefined ? { password } : {}) }) as SimRpcClient;
}

export interface SimRpcServerClient extends SimRpcClient {
  readonly identity: string;
  readonly handshake: { identity: string; password?: Buffer; endpoint: string; protocols: Set<string> };
}

export interface SimRpcServer {
  auth(cb: (accept: (session?: unknown, protocol?: string | false) => void, reject: (code: number, message?: string) => void, handshake: any) => void): void;
  on(event: 'client', listener: (client: SimRpcServerClient) => void): unknown;
  on(event: string, listener: (...args: any[]) => void): unknown;
  listen(port: number, host?: string): Promise<import('node:http').Server>;
  handleUpgrade: (...args: any[]) => void;
  close(options?: { code?: number; reason?: string; awaitPending?: boolean; force?: boolean }): Promise<void>;
}

export function createRpcServer(opts: { protocols: string[]; strictMode: boolean; callTimeoutMs?: number; pingIntervalMs?: number }): SimRpcServer {
  return new (RawServer as any)(opts) as SimRpcServer;
}

export function rpcError(type: string, message?: string): Error {
  return rawCreateRPCError(type, message) as Error;
}
