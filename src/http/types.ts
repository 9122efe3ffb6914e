import type { Readable } from 'node:stream';
import type { operations } from '../../generated/v1';
import type { Principal } from '../store/tokens-repo';
import type { ServerCaller } from './access';

export type OperationId = keyof operations;

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : undefined;

/** The JSON body an operation accepts, from the generated types. */
export type RequestBody<Op extends OperationId> = operations[Op] extends {
  requestBody: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type QueryOf<Op extends OperationId> = NonNullable<operations[Op]['parameters']['query']>;
export type PathOf<Op extends OperationId> = NonNullable<operations[Op]['parameters']['path']>;

declare const jsonOf: unique symbol;
/**
 * JSON text that parses to a `T`: a view a repository had SQLite build (src/store/server-view.ts), answered as it
 * is. Only the code that builds it casts a string to it, so its type says which schema it follows.
 */
export type JsonText<T> = string & { readonly [jsonOf]: T };

/**
 * What a handler returns: one of the success answers the spec lists for its operation, typed from
 * generated/v1.ts, so a handler cannot send a body the contract does not allow: `body`, serialized by the
 * dispatcher, or `json`, text already serialized. Errors are thrown as AppError.
 */
export type Reply<Op extends OperationId> = {
  [S in keyof operations[Op]['responses']]: S extends 200 | 201 | 202 | 204
    ?
        | { status: S; body: Json<operations[Op]['responses'][S]>; headers?: Record<string, string> }
        | { status: S; json: JsonText<Json<operations[Op]['responses'][S]>>; headers?: Record<string, string> }
    : never;
}[keyof operations[Op]['responses']];

/**
 * The request as a handler sees it: validated by openapi-backend against the spec, with its caller; for an
 * operation on a server, the server as the access check found it (access.ts: the caller is its owner or a member
 * with what the operation needs), so a handler never looks up whose it is.
 */
export interface Call<Op extends OperationId> {
  principal: Principal;
  path: PathOf<Op>;
  query: QueryOf<Op>;
  body: RequestBody<Op>;
  headers: Record<string, string | string[] | undefined>;
  /** The request body as it streams in, for the operations whose body is not JSON (tag Files: uploads). */
  raw: Readable;
  server: PathOf<Op> extends { server_id: string } ? ServerCaller : undefined;
}

/** One Server-Sent Event (HTML Living Standard §9.2): `event`, `id`, and `data` as JSON. */
export interface SseEvent {
  event: string;
  id: string;
  data: unknown;
}

/**
 * What a streaming operation (text/event-stream) returns. The stream is pulled by its client (src/http/sse.ts):
 * `stream` is called when it opens and again each time it resumes after the client stopped reading.
 */
export interface StreamReply {
  status: 200;
  /** The server the stream shows; it ends when that server is deleted. */
  serverId?: string;
  /**
   * Writes the events after `after` (the id of the last event the stream wrote; when absent, where the client
   * asked: its `Last-Event-ID`), then live ones, and returns the function that ends the subscription. Returns null
   * instead when some events after `after` are no longer held (it may also throw when the source is gone): the
   * stream then ends and the client reconnects.
   */
  stream: (write: (event: SseEvent) => void, after?: string) => (() => void) | null;
}

export type Handler<Op extends OperationId> = (
  call: Call<Op>,
) => Reply<Op> | StreamReply | FileReply | ContentReply | Promise<Reply<Op> | StreamReply | FileReply | ContentReply>;

/**
 * What a download made while it is sent returns (a server's file, a folder's archive: src/http/send-content.ts):
 * its bytes as a stream, with the length when known; `part` when it answers a Range (206).
 */
export interface ContentReply {
  status: 200;
  content: Readable;
  contentType: string;
  headers: Record<string, string>;
  length?: number;
  part?: { start: number; end: number; size: number };
}

export type Handlers = { [Op in OperationId]?: Handler<Op> };

/**
 * What a download returns: a file streamed from disk (never read whole into memory) with its length and type;
 * the handler has checked it exists and belongs to the caller.
 */
export interface FileReply {
  status: 200;
  file: string;
  contentType: string;
  headers: Record<string, string>;
  /** Whether a `Range` is honoured (send-file.ts): only for a file that never changes once served. */
  ranges?: boolean;
}
