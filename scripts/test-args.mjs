// The arguments of `npm test` (scripts/test.mjs): what to run, on which back end, and whether
// the type check, the architecture rules and the lint rules run beside the tests. Kept apart
// from the runner, which starts work as it is imported, so that test/docs/test-runner.test.ts
// can check the parsing alone.
import fs from 'node:fs'
import path from 'node:path'

export const usage = `Usage: npm test [-- [options] [path...]]

With no path, runs the whole suite as CI does (.ci/run): the type check, the architecture
rules and the lint rules beside every test file, on PGlite and, when a PostgreSQL server
answers, on PostgreSQL too.

With paths (test files, or folders whose *.test.ts files run), runs just those files on
PGlite, without the checks: the quick loop while working on a file. A file that tests
PostgreSQL only (test/chaos/, test/hardening/database-outage) runs on PostgreSQL when every
path given is such a file.

Options:
  --storage <pglite|postgres|both>
                 the back end(s) to run on (with paths the default is pglite, without
                 them both; both runs PostgreSQL's pass only when a server answers)
  --checks       run the type check, architecture and lint checks even with paths
  --no-checks    leave them out of a whole run
  -h, --help     print this and exit

Examples:
  npm test                                    the whole suite and the checks, as in CI
  npm test -- test/ledger/row-id.test.ts      one file on PGlite, no checks
  npm test -- --storage postgres test/users   a folder's files on PostgreSQL
  npm test -- --checks test/cli               a folder, with the checks

Settings (environment): BANK_TEST_DATABASE_URL, BANK_TEST_CONCURRENCY, BANK_TEST_GROUPS,
BANK_TEST_SLOWEST, BANK_TEST_BUNDLE=0, BANK_TEST_LOG_LEVEL, BANK_TEST_REQUIRE_POSTGRES=1
(see "Testing" in CONTRIBUTING.md).
`

const storages = ['pglite', 'postgres', 'both']

/** A mistake in the arguments: the runner prints its message and the usage's first line. */
export class UsageError extends Error {}

/**
 * Reads `npm test`'s arguments. Returns `{ help: true }` for `--help`, else `{ paths,
 * storage, checks }`: `paths` as given (empty for the whole suite), `storage` one of
 * pglite, postgres or both, or undefined when not chosen (`defaultStorage` decides), and
 * `checks` whether the type check, architecture and lint checks run. Throws UsageError on
 * an unknown option, a missing or wrong value, or a path that is not there or not a test.
 */
export function parseTestArgs(argv, { root = process.cwd() } = {}) {
  // Asking for help wins over any mistake beside it.
  if (argv.some((arg) => arg === '-h' || arg === '--help')) return { help: true }
  const paths = []
  let storage
  let checks
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--checks' || arg === '--no-checks') checks = arg === '--checks'
    else if (arg === '--storage' || arg.startsWith('--storage=')) {
      const value = arg === '--storage' ? argv[++i] : arg.slice('--storage='.length)
      storage = storageValue(value)
    } else if (arg === '--') continue
    else if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`)
    else paths.push(checkedPath(arg, root))
  }
  return { help: false, paths, storage, checks: checks ?? paths.length === 0 }
}

function storageValue(value) {
  if (value === undefined || value.startsWith('-')) {
    throw new UsageError(`--storage needs a value: ${storages.join(', ')}`)
  }
  if (!storages.includes(value)) {
    throw new UsageError(`--storage ${value}: not one of ${storages.join(', ')}`)
  }
  return value
}

function checkedPath(given, root) {
  const full = path.resolve(root, given)
  let stat
  try {
    stat = fs.statSync(full)
  } catch {
    throw new UsageError(`${given}: no such file or folder`)
  }
  if (!stat.isDirectory() && !full.endsWith('.test.ts')) {
    throw new UsageError(`${given}: not a test file (test files end in .test.ts)`)
  }
  return given
}

/**
 * The back ends to run on when `--storage` was not given: both for the whole suite (as CI
 * runs it), else PGlite — or PostgreSQL when every file given tests PostgreSQL only
 * (`postgresOnlyFile`), since on PGlite it would declare no tests.
 */
export function defaultStorage(paths, files, postgresOnlyFile) {
  if (paths.length === 0) return 'both'
  return files.length > 0 && files.every(postgresOnlyFile) ? 'postgres' : 'pglite'
}
