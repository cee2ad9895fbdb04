// The real machine behind the doctor's Probe.
import { accessSync, constants, statSync } from 'node:fs';
import { request } from 'node:http';
import { delimiter, join } from 'node:path';
import type { Probe } from './doctor-checks.js';

export function machineProbe(env: NodeJS.ProcessEnv): Probe {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  return {
    env,
    exists(path) {
      try {
        statSync(path);
        return true;
      } catch {
        return false;
      }
    },
    readWrite(path) {
      try {
        accessSync(path, constants.R_OK | constants.W_OK);
        return true;
      } catch {
        return false;
      }
    },
    which(binary) {
      for (const dir of (env.PATH ?? '').split(delimiter)) {
        if (dir && executable(join(dir, binary))) return join(dir, binary);
      }
      return null;
    },
    executable,
    pingSocket(path) {
      return new Promise((resolve) => {
        const req = request({ socketPath: path, path: '/_ping', method: 'GET', timeout: 3000 }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200 ? null : `answered HTTP ${res.statusCode}`));
        });
        req.on('timeout', () => req.destroy(new Error('no answer within 3 s')));
        req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
        req.end();
      });
    },
  };
}
