// `deployment exec`: a WebSocket to GET /deployments/{id}/exec (DESIGN.md). Frames are JSON with a `type`:
// client → stdin {data}, resize {cols, rows}, stdin_close; server → stdout {data}, stderr {data},
// exit {code}, error {message}. Data is base64. The remote exit code becomes ours; unknown → 1.
import { CliError, EXIT, httpError } from './errors.js';
import { enc } from './client.js';
import { arg, flagBool, flagString, type CommandContext } from './run-context.js';
import { tokenFor } from './session.js';

export interface ServerFrame {
  type: 'stdout' | 'stderr' | 'exit' | 'error';
  data?: string;
  code?: number;
  message?: string;
}

/** Pure: one text frame → a known server frame, or null for anything else (ignored). */
export function parseServerFrame(raw: string): ServerFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || !('type' in value)) return null;
  const frame = value as Record<string, unknown>;
  switch (frame.type) {
    case 'stdout':
    case 'stderr':
      return typeof frame.data === 'string' ? { type: frame.type, data: frame.data } : null;
    case 'exit':
      return { type: 'exit', ...(Number.isInteger(frame.code) ? { code: frame.code as number } : {}) };
    case 'error':
      return { type: 'error', message: typeof frame.message === 'string' ? frame.message : 'exec failed' };
    default:
      return null;
  }
}

/** Maps a remote exit code to ours: 0-255 as is; anything undeterminable → 1. */
export function exitCodeOf(code: number | undefined): number {
  return code !== undefined && Number.isInteger(code) && code >= 0 && code <= 255 ? code : 1;
}

export async function execCommand(ctx: CommandContext): Promise<number> {
  const id = arg(ctx, 'ID');
  const { baseUrl, context } = ctx.resolved();
  const token = tokenFor(context.name, ctx.env);
  const stdin = ctx.stdin;
  const tty = stdin.isTTY === true && !flagBool(ctx, 'no-tty');
  const command = ctx.rest.length > 0 ? ctx.rest : ['/bin/sh'];
  const params = new URLSearchParams();
  for (const word of command) params.append('command', word);
  params.set('tty', String(tty));
  const container = flagString(ctx, 'container');
  if (container) params.set('container', container);
  if (tty && process.stdout.columns && process.stdout.rows) {
    params.set('cols', String(process.stdout.columns));
    params.set('rows', String(process.stdout.rows));
  }
  const url = `${baseUrl.replace(/^http/, 'ws')}/deployments/${enc(id)}/exec?${params}`;
  const { default: WebSocket } = await import('ws');
  const target = { kind: 'deployment', name: id };

  return new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, handshakeTimeout: 15_000 });
    let exitCode: number | undefined;
    let remoteError = false;
    let opened = false;
    const cleanup = () => {
      if (tty && stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
      process.stdout.off('resize', onResize);
    };
    const onResize = () => {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols: process.stdout.columns, rows: process.stdout.rows }));
    };
    ws.on('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const textBody = Buffer.concat(chunks).toString('utf8');
        let body: unknown = textBody;
        try {
          body = JSON.parse(textBody);
        } catch {
          // plain text reason
        }
        reject(httpError(target, res.statusCode ?? 0, body));
      });
    });
    ws.on('error', (error: NodeJS.ErrnoException) => {
      cleanup();
      // Before the session: the server is unreachable (3). During it: the exit code is lost ('close' gives 1).
      if (!opened) reject(new CliError(`cannot reach the API at ${baseUrl}: ${error.code ?? error.message}`, EXIT.unreachable));
    });
    ws.on('open', () => {
      opened = true;
      if (tty) stdin.setRawMode(true);
      stdin.on('data', (chunk: Buffer) => ws.send(JSON.stringify({ type: 'stdin', data: chunk.toString('base64') })));
      stdin.on('end', () => {
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'stdin_close' }));
      });
      stdin.resume();
      if (tty) process.stdout.on('resize', onResize);
    });
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      if (isBinary) return;
      const frame = parseServerFrame(raw.toString('utf8'));
      if (!frame) return;
      if (frame.type === 'stdout') process.stdout.write(Buffer.from(frame.data ?? '', 'base64'));
      else if (frame.type === 'stderr') process.stderr.write(Buffer.from(frame.data ?? '', 'base64'));
      else if (frame.type === 'exit') {
        exitCode = exitCodeOf(frame.code);
        ws.close();
      } else {
        remoteError = true;
        process.stderr.write(`error: deployment '${id}': exec failed: ${frame.message}\n`);
      }
    });
    ws.on('close', () => {
      cleanup();
      resolve(exitCode ?? (remoteError ? 1 : exitCodeOf(undefined)));
    });
  });
}
