// Loaded by each test process of `npm test` (scripts/test.mjs) before node:test, so that
// node:test finds which test an asynchronous operation belongs to at a fraction of the CPU.
//
// Node 20's test runner (lib/internal/test_runner/harness.js) keeps a map from every async
// resource created under a test to that test, with an async hook that has an `init` and a
// `destroy` callback. Its uses: a `test()`, `describe()` or hook called inside a suite's
// function (as a file imported by a group's suite declares its tests) joins that suite, and
// an uncaught exception or unhandled rejection fails the test it came from. But a `destroy`
// callback makes V8 track every promise until it is collected: in a test process that was
// a sixth of all CPU time (a weak reference, a map entry and a callback per promise, and
// the collector's work on them).
//
// Here the same question is answered as AsyncLocalStorage answers it: each resource created
// while a test's code runs is marked with that test (a property of the resource, found
// again through `executionAsyncResource()`), and needs no `destroy`. The harness's own
// `init` still runs for the tests themselves, so its map holds the tests, and its
// `executionAsyncId()` answers the id of the test the running code belongs to, which the
// map then finds. The harness takes `createHook` and `executionAsyncId` from async_hooks
// when it is loaded; they are replaced only for that moment, and only the harness keeps
// the replacements. One difference: a resource belongs to the test whose code created it
// (AsyncLocalStorage's rule), where the harness followed the resource that triggered it; a
// test's own code is both.
import asyncHooks from 'node:async_hooks'

const { createHook, executionAsyncId, executionAsyncResource } = asyncHooks
/** On a resource: the async id of the test (or suite) whose code created it. */
const testOf = Symbol('bank.test.asyncTest')

/** The harness's hook, with its `init` run for tests only and no `destroy`. */
function lighterHook(harness) {
  const hook = createHook({
    init(asyncId, type, triggerAsyncId, resource) {
      // node:test's tests and suites are async resources of the type 'Test'.
      if (type === 'Test') {
        harness.init(asyncId, type, triggerAsyncId, resource)
        resource[testOf] = asyncId
        return
      }
      const test = executionAsyncResource()?.[testOf]
      // An error thrown here would end the process: a resource that takes no property (one
      // frozen by its maker) stays unmarked, and an error it throws is nobody's test's.
      if (test !== undefined && Object.isExtensible(resource)) resource[testOf] = test
    },
  })
  return {
    enable() {
      hook.enable()
      return this
    },
    disable() {
      hook.disable()
      return this
    },
  }
}

let replaced = 0
// BANK_TEST_ASYNC_HOOK=node keeps node:test's own hook (to compare, or to rule this out).
const keep = process.env.BANK_TEST_ASYNC_HOOK === 'node'
asyncHooks.createHook = (hooks) => {
  // The harness's hook is the one with a `destroy`; anything else is made as asked.
  if (keep || typeof hooks?.init !== 'function' || typeof hooks?.destroy !== 'function') {
    return createHook(hooks)
  }
  replaced++
  return lighterHook(hooks)
}
asyncHooks.executionAsyncId = () => executionAsyncResource()?.[testOf] ?? executionAsyncId()
try {
  await import('node:test')
} finally {
  asyncHooks.createHook = createHook
  asyncHooks.executionAsyncId = executionAsyncId
}

/** How many hooks of the harness were made lighter: 1 once a test was declared, else 0. */
export const lighterHooks = () => replaced
