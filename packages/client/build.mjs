// `npm run build:client`: builds the SDK package @partner-bank/client from src/client/ in place
// (tsconfig.build.json: ESM JavaScript and .d.ts types under packages/client/dist/), then
// checks what it built, so that a partner's install cannot break on it:
// - only the SDK's own files: src/client/, src/contract/, src/nats/ and the contract files
//   (src/*/*-contract.ts), never the service's code;
// - every relative import ends in `.js` and names a built file (tsc rewrites the `.ts`
//   imports of the JavaScript; those of the .d.ts files are rewritten here);
// - every package imported is node:* or one of package.json's `dependencies`.
// Exits non-zero, naming each problem, when a check fails.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '../..')
const dist = path.join(here, 'dist')
const allowedFile =
  /^(client|contract|nats)\/[^/]+$|^client\/generated\/[^/]+$|^[a-z-]+\/[a-z-]+-contract\.(js|d\.ts)$/
const specifiers = /(\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)(['"])([^'"]+)\2/gm

const files = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? files(full) : [full]
  })

function compile() {
  fs.rmSync(dist, { recursive: true, force: true })
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc')
  const config = path.join(here, 'tsconfig.build.json')
  const result = spawnSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

/** tsc keeps a .d.ts file's `./x.ts` imports as written; a consumer's tsc wants `./x.js`. */
function rewriteDeclarations() {
  for (const file of files(dist).filter((f) => f.endsWith('.d.ts'))) {
    const text = fs.readFileSync(file, 'utf8')
    const rewritten = text.replace(specifiers, (whole, lead, quote, spec) =>
      spec.startsWith('.') && spec.endsWith('.ts') && !spec.endsWith('.d.ts')
        ? `${lead}${quote}${spec.slice(0, -3)}.js${quote}`
        : whole,
    )
    if (rewritten !== text) fs.writeFileSync(file, rewritten)
  }
}

/** What is wrong with one built file: where it comes from, and what it imports. */
function problemsOf(file, dependencies) {
  const rel = path.relative(dist, file).split(path.sep).join('/')
  const problems = allowedFile.test(rel) ? [] : [`${rel}: not part of the SDK (server code?)`]
  for (const [, , , spec] of fs.readFileSync(file, 'utf8').matchAll(specifiers)) {
    if (spec.startsWith('.')) {
      if (!spec.endsWith('.js')) problems.push(`${rel}: imports '${spec}' (not .js)`)
      else if (!fs.existsSync(path.resolve(path.dirname(file), spec))) {
        problems.push(`${rel}: imports '${spec}', which was not built`)
      }
      continue
    }
    const name = spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/')
    if (!spec.startsWith('node:') && !dependencies.has(name)) {
      problems.push(`${rel}: imports '${spec}', not a dependency in package.json`)
    }
  }
  return problems
}

compile()
rewriteDeclarations()
const manifest = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'))
const dependencies = new Set(Object.keys(manifest.dependencies ?? {}))
const built = files(dist)
const problems = built.flatMap((file) => problemsOf(file, dependencies))
if (problems.length > 0) {
  const list = problems.join('\n  ')
  process.stderr.write(`build:client: the built SDK is not fit to ship:\n  ${list}\n`)
  process.exit(1)
}
process.stdout.write(`build:client: ${built.length} files in ${path.relative(root, dist)}\n`)
