import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { allOperations } from '../../src/contract/index.ts'
import { undeclared, type Module } from '../../src/module.ts'
import { modules } from '../../src/modules.ts'
import { useTestBank } from '../support/harness.ts'

// The shape issue 29 asks for, checked: a capability is a folder with one declaration
// (src/<folder>/<folder>-module.ts) listed in src/modules.ts; what the services register at
// start is declared by a module; CONTRIBUTING.md's project layout names every folder of src/.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const src = path.join(root, 'src')

/** Folders of src/ that are shared toolkits or front ends, not capabilities: no declaration. */
const toolkits = [
  'calendar', 'cli', 'client', 'console', 'contract', 'db', 'metrics', 'nats', 'secrets',
  'transport',
]

const folders = readdirSync(src).filter((name) => statSync(path.join(src, name)).isDirectory())

test('modules - every folder of src/ is a capability with its one declaration, or a named toolkit', () => {
  const declared = new Set(modules.map((m) => m.name))
  for (const folder of folders) {
    if (toolkits.includes(folder)) {
      assert.ok(!declared.has(folder), `${folder} is a toolkit and declares no module`)
      continue
    }
    const file = path.join(src, folder, `${folder}-module.ts`)
    assert.ok(
      statSync(file, { throwIfNoEntry: false })?.isFile(),
      `src/${folder}/ has its declaration ${folder}-module.ts`,
    )
    assert.ok(declared.has(folder), `src/modules.ts lists the module of src/${folder}/`)
  }
  for (const module of modules)
    assert.ok(folders.includes(module.name), `module ${module.name} is a folder of src/`)
  assert.equal(declared.size, modules.length, 'each module is listed once')
})

test('modules - the modules bind every operation of the contract exactly once', async () => {
  // Binding needs no running service: the handlers are only built, not called.
  const services = new Proxy({}, { get: () => ({}) }) as never
  const bound = modules.flatMap((m) => (m.endpoints?.(services) ?? []).map((e) => e.operation))
  const operations = allOperations()
  assert.equal(new Set(bound).size, bound.length, 'no operation is bound twice')
  assert.deepEqual(
    new Set(bound),
    new Set(operations),
    'every operation is bound, and nothing else',
  )
})

test('modules - a job kind or subscription no module declares is named; declared ones pass', () => {
  const declaring: Module[] = [
    { name: 'a', jobKinds: ['a.run'], subscriptions: ['clearing.cycle_completed'] },
  ]
  assert.deepEqual(
    undeclared(declaring, { jobKinds: ['a.run'], subscriptions: ['clearing.cycle_completed'] }),
    [],
  )
  // Declared but off by configuration (not registered) is fine.
  assert.deepEqual(undeclared(declaring, { jobKinds: [], subscriptions: [] }), [])
  assert.deepEqual(
    undeclared(declaring, { jobKinds: ['a.run', 'b.sweep'], subscriptions: ['*'] }),
    ['job kind b.sweep is declared by no module', 'subscription * is declared by no module'],
  )
})

const tb = useTestBank({ env: { BANK_CLEARING_SCHEDULE: 'on' } })

test('modules - a running bank registers only declared job kinds and subscriptions, and with the schedule on, every declared one', async () => {
  await tb.ready
  const { jobRunner, events } = tb.bank.services
  const registered = { jobKinds: jobRunner.kindNames(), subscriptions: events.patterns() }
  assert.deepEqual(undeclared(modules, registered), [])
  assert.deepEqual(new Set(registered.jobKinds), new Set(modules.flatMap((m) => m.jobKinds ?? [])))
  assert.deepEqual(
    new Set(registered.subscriptions),
    new Set(modules.flatMap((m) => m.subscriptions ?? [])),
  )
})

test('modules - the CONTRIBUTING.md project layout names every folder of src/', () => {
  const contributing = readFileSync(path.join(root, 'CONTRIBUTING.md'), 'utf8')
  const start = contributing.indexOf('## Project layout')
  assert.ok(start >= 0, 'CONTRIBUTING.md has a Project layout section')
  const layout = contributing.slice(start, contributing.indexOf('\n## ', start + 1))
  const missing = folders.filter((folder) => !new RegExp(`(^|\\s)${folder}/`, 'm').test(layout))
  assert.deepEqual(
    missing,
    [],
    `folders of src/ the CONTRIBUTING.md layout does not name: ${missing.join(', ')}`,
  )
})

/** The tables an interface of the folder's files names, with those of the ones it extends. */
function tablesOf(name: string, files: ReadonlyMap<string, string>): string[] {
  for (const text of files.values()) {
    const found = new RegExp(`export interface ${name}(?: extends ([\\w, ]+))?\\s*\\{([^}]*)\\}`)
      .exec(text)
    if (!found) continue
    const own = [...found[2]!.matchAll(/^\s+([a-z_]+)\??:/gm)].map((m) => m[1]!)
    const bases = (found[1] ?? '').split(',').map((b) => b.trim()).filter(Boolean)
    return [...own, ...bases.flatMap((b) => tablesOf(b, files))]
  }
  return []
}

/** Source without its comments, so that prose naming a table is not a query of it. */
const withoutComments = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:])\/\/.*$/gm, '$1')

/** The tables a file's code queries: Kysely's builders, and the SQL in its templates. */
function queriedTables(text: string, tables: ReadonlySet<string>): Set<string> {
  const code = withoutComments(text)
  const builder = /(?:selectFrom|insertInto|updateTable|deleteFrom|Join)\(\s*'([a-z_]+)/g
  const sqlWord = /\b(?:from|join|into|update|table)\s+([a-z_]+)\b/gi
  const named = [...code.matchAll(builder), ...code.matchAll(sqlWord)].map((m) => m[1]!)
  return new Set(named.filter((t) => tables.has(t)))
}

test('modules - a module queries only its own tables and those it declares it reads, with why', () => {
  const allFiles = new Map<string, string>()
  for (const module of modules) {
    const dir = path.join(src, module.name)
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts')))
      allFiles.set(`${module.name}/${file}`, readFileSync(path.join(dir, file), 'utf8'))
  }
  const owner = new Map<string, string>()
  for (const module of modules) {
    const declaration = allFiles.get(`${module.name}/${module.name}-module.ts`)!
    const tablesType = /Module<\w+, (\w+)>/.exec(declaration)?.[1]
    const owned = tablesType ? tablesOf(tablesType, allFiles) : []
    for (const table of owned) owner.set(table, module.name)
  }
  assert.equal(owner.get('transactions'), 'ledger')
  assert.equal(owner.get('partner_debts'), 'ledger', 'the tables of an extended interface too')
  const tables = new Set(owner.keys())
  const undeclaredReads: string[] = []
  for (const [file, text] of allFiles) {
    // Migrations name other tables in foreign keys; contracts hold no queries.
    if (/-migrations?\.ts$|-contract\.ts$/.test(file)) continue
    const module = modules.find((m) => file.startsWith(`${m.name}/`))!
    for (const table of queriedTables(text, tables)) {
      if (owner.get(table) === module.name) continue
      const why = module.reads?.[table]
      if (!why) undeclaredReads.push(`src/${file} queries ${table} (module ${owner.get(table)})`)
    }
  }
  assert.deepEqual(undeclaredReads, [], 'use the owning module\'s service, or declare the read')
  for (const module of modules) {
    for (const [table, why] of Object.entries(module.reads ?? {})) {
      assert.ok(owner.has(table) && owner.get(table) !== module.name,
        `${module.name} reads ${table}: another module's table`)
      assert.ok(why.length > 20, `${module.name} says why it reads ${table}`)
    }
  }
})
