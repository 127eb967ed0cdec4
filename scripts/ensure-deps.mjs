// Installs the npm dependencies when they are missing or older than the lock file, so that
// `npm start` and `npm test` work on a fresh clone. Only Node's own modules are used here.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export function ensureDependencies() {
  const marker = path.join(root, 'node_modules', '.package-lock.json')
  const lock = path.join(root, 'package-lock.json')
  const fresh = fs.existsSync(marker)
    && (!fs.existsSync(lock) || fs.statSync(marker).mtimeMs >= fs.statSync(lock).mtimeMs)
  if (fresh) return
  process.stderr.write('installing npm dependencies (first run)…\n')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, [fs.existsSync(lock) ? 'ci' : 'install', '--no-audit',
      '--no-fund'], {
    cwd: root,
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  if (result.status !== 0) {
    process.stderr.write('npm could not install the dependencies; see the messages above.\n')
    process.exit(result.status ?? 1)
  }
}
