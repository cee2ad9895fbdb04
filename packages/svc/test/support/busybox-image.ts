// Builds the local test image `svc-test/busybox:latest` (no registry is reachable in tests): a root file system
// holding only the static busybox, a link for every applet, and minimal /etc/passwd and /etc/group.
// Idempotent (does nothing when the image exists) and safe when several test processes call it at once:
// the build runs under flock(1) on a host-wide lock file and re-checks inside the lock.
// Known quirk of the static Debian busybox: `wget` segfaults (static glibc); use `nc` for HTTP
// (`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 host port`). Name resolution via `nc`, `ping`, `nslookup` works.
//
//   import { ensureBusyboxImage, BUSYBOX_IMAGE } from '../support/busybox-image.js';
//   before(async () => { await ensureBusyboxImage(); });

import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const BUSYBOX_IMAGE = 'svc-test/busybox:latest';

const run = promisify(execFile);
const LOCK_FILE = join(tmpdir(), 'svc-test-busybox-image.lock');

// Runs inside the lock. $1 = image reference. Links are absolute (/bin/busybox) so they resolve inside the image.
const BUILD_SCRIPT = String.raw`
set -eu
image="$1"
if docker image inspect "$image" >/dev/null 2>&1; then exit 0; fi
busybox_bin="$(command -v busybox)"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/sbin" "$root/usr/bin" "$root/usr/sbin" "$root/etc" "$root/tmp" "$root/proc" "$root/sys" "$root/dev" "$root/root" "$root/home"
chmod 1777 "$root/tmp"
cp "$busybox_bin" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list-full); do
  [ "$applet" = "bin/busybox" ] && continue
  mkdir -p "$root/$(dirname "$applet")"
  ln -sf /bin/busybox "$root/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
tar -C "$root" -c . | docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin' - "$image" >/dev/null
`;

async function imageExists(image: string): Promise<boolean> {
  try {
    await run('docker', ['image', 'inspect', image]);
    return true;
  } catch {
    return false;
  }
}

/** Makes sure `image` (default svc-test/busybox:latest) exists locally; returns its reference. */
export async function ensureBusyboxImage(image: string = BUSYBOX_IMAGE): Promise<string> {
  if (await imageExists(image)) return image;
  await run('flock', [LOCK_FILE, 'sh', '-c', BUILD_SCRIPT, 'build-busybox-image', image], { timeout: 120_000 });
  if (!(await imageExists(image))) throw new Error(`building ${image} finished but the image is missing`);
  return image;
}
