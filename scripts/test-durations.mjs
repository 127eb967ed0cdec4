// Copies this machine's last test durations (written by scripts/test.mjs after each run)
// into test/durations.json, which a fresh clone plans its first run by. Run it after a
// full `npm test` when files have been added or have grown much slower or faster.
import fs from 'node:fs'
import path from 'node:path'

const root = path.resolve(import.meta.dirname, '..')
const measured = JSON.parse(
  fs.readFileSync(path.join(root, 'node_modules/.cache/bank-test/durations.json'), 'utf8'),
)
const existing = (file) => fs.existsSync(path.join(root, file.replace(/^\w+ /, '')))
const kept = Object.fromEntries(
  Object.keys(measured)
    .filter(existing)
    .sort()
    .map((key) => [key, Math.round(measured[key])]),
)
fs.writeFileSync(path.join(root, 'test/durations.json'), `${JSON.stringify(kept, null, 1)}\n`)
process.stdout.write(`test/durations.json: ${Object.keys(kept).length} files\n`)
