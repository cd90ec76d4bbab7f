import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';

/**
 * The ComfyUI stand-in's `GET /ws?clientId=` (also `/api/ws`), as `../shared/protocols/comfyui.md`
 * ("WebSocket") describes `server.py`: JSON text frames `{type, data}`; a server-made id
 * (uuid4 hex) when `clientId` is missing, reported as `sid` in the first `status`; the same id
 * reconnecting replaces the old socket and, if that client's prompt is mid-run, gets one
 * `executing {node}`; `feature_flags` answered only to a client's first message.
 */
export class ComfySockets {
  #sockets = new Map<string, WebSocket>();
  #wss = new WebSocketServer({ noServer: true });
  #queueRemaining: () => number;
  #runningNode: (clientId: string) => string | undefined;

  constructor(queueRemaining: () => number, runningNode: (clientId: string) => string | undefined) {
    this.#queueRemaining = queueRemaining;
    this.#runningNode = runningNode;
  }

  /** To one client, to every socket (`null`), or to nobody (`undefined`). */
  send(type: string, data: Record<string, unknown>, to: string | null | undefined): void {
    if (to === undefined) return;
    const text = JSON.stringify({ type, data });
    const sockets = to === null ? [...this.#sockets.values()] : [this.#sockets.get(to)];
    for (const socket of sockets) {
      if (socket !== undefined && socket.readyState === socket.OPEN) socket.send(text);
    }
  }

  /** The HTTP server's `upgrade` listener. */
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, allowed: boolean): void {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (!/^(\/api)?\/ws$/.test(url.pathname) || !allowed) {
      socket.destroy();
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      const sid = url.searchParams.get('clientId') || randomUUID().replaceAll('-', '');
      this.#sockets.set(sid, ws);
      ws.on('close', () => {
        if (this.#sockets.get(sid) === ws) this.#sockets.delete(sid);
      });
      ws.once('message', (raw, isBinary) => {
        if (!isBinary && parseType(String(raw)) === 'feature_flags') {
          const data = { supports_preview_metadata: true, max_upload_size: 100 * 1024 * 1024 };
          ws.send(JSON.stringify({ type: 'feature_flags', data }));
        }
      });
      const status = { exec_info: { queue_remaining: this.#queueRemaining() } };
      ws.send(JSON.stringify({ type: 'status', data: { status, sid } }));
      const node = this.#runningNode(sid);
      if (node !== undefined) ws.send(JSON.stringify({ type: 'executing', data: { node } }));
    });
  }

  close(): void {
    for (const socket of this.#sockets.values()) socket.terminate();
    this.#sockets.clear();
    this.#wss.close();
  }
}

function parseType(text: string): unknown {
  try {
    return (JSON.parse(text) as { type?: unknown }).type;
  } catch {
    return undefined; // ComfyUI logs and ignores a message it cannot read
  }
}
