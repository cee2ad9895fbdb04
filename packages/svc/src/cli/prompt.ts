// Terminal prompts (init, token revoke, login without -p). Written to stderr so stdout stays clean.
import { createInterface } from 'node:readline';

export function isInteractive(stdin: NodeJS.ReadStream): boolean {
  return stdin.isTTY === true;
}

export interface Prompter {
  ask(question: string): Promise<string>;
  close(): void;
}

/** One readline interface for a whole dialogue: a second interface on the same terminal would echo twice. */
export function createPrompter(stdin: NodeJS.ReadStream, stderr: NodeJS.WritableStream): Prompter {
  const rl = createInterface({ input: stdin, output: stderr, terminal: true });
  let closed = false;
  rl.on('close', () => (closed = true));
  return {
    ask(question) {
      if (closed) return Promise.reject(new Error('input closed'));
      return new Promise<string>((resolve, reject) => {
        const onClose = () => reject(new Error('input closed'));
        rl.once('close', onClose);
        rl.question(question, (answer) => {
          rl.off('close', onClose);
          resolve(answer.trim());
        });
      });
    },
    close() {
      rl.close();
    },
  };
}

/** A single question. */
export async function ask(stdin: NodeJS.ReadStream, stderr: NodeJS.WritableStream, question: string): Promise<string> {
  const prompter = createPrompter(stdin, stderr);
  try {
    return await prompter.ask(question);
  } finally {
    prompter.close();
  }
}

/** Reads a line without echoing it (passwords). */
export async function askHidden(stdin: NodeJS.ReadStream, stderr: NodeJS.WritableStream, question: string): Promise<string> {
  stderr.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  let value = '';
  try {
    return await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString('utf8')) {
          if (ch === '\r' || ch === '\n') {
            stdin.off('data', onData);
            resolve(value);
            return;
          }
          if (ch === '\u0003') {
            stdin.off('data', onData);
            reject(new Error('interrupted'));
            return;
          }
          if (ch === '\u007f') value = value.slice(0, -1);
          else value += ch;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    stderr.write('\n');
  }
}
