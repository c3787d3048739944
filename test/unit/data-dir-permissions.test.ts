import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { secureDataDir, tightenTree } from '../../src/db/data-dir-permissions.ts'

// DATA_DIR is made private (docs/contract.md, Running it), but only when it is the service's own:
// pointed at a shared directory by mistake, the service refuses rather than change other files' modes.
const modeOf = (path: string) => statSync(path).mode & 0o7777
const scratch = () => mkdtempSync(join(tmpdir(), 'data-dir-'))

test('a loose DATA_DIR holding only what the service keeps is tightened to 0700, and that is noticed', () => {
  const dir = scratch()
  mkdirSync(join(dir, 'pglite'))
  writeFileSync(join(dir, 'service.lock'), '1')
  chmodSync(dir, 0o755)
  const notices: string[] = []
  secureDataDir(dir, (message) => notices.push(message))
  assert.equal(modeOf(dir), 0o700)
  assert.match(notices.join('\n'), /0755.*0700/)
})

test('a loose DATA_DIR holding other files, or a shared (sticky) one, is refused and left as it was', () => {
  const shared = scratch()
  writeFileSync(join(shared, 'notes.txt'), 'not the service\'s')
  chmodSync(shared, 0o755)
  assert.throws(() => secureDataDir(shared, () => {}), /DATA_DIR .* is not the service's own \(it holds notes\.txt\)/)
  assert.equal(modeOf(shared), 0o755)

  const sticky = scratch()
  chmodSync(sticky, 0o1777)
  assert.throws(() => secureDataDir(sticky, () => {}), /a shared directory/)
  assert.equal(modeOf(sticky), 0o1777)
})

test('tightening after the database opens touches only the service\'s own entries', () => {
  const dir = scratch()
  mkdirSync(join(dir, 'pglite', 'base'), { recursive: true })
  writeFileSync(join(dir, 'pglite', 'base', 'relcache'), 'x')
  chmodSync(join(dir, 'pglite', 'base', 'relcache'), 0o666)
  writeFileSync(join(dir, 'other.txt'), 'x')
  chmodSync(join(dir, 'other.txt'), 0o644)
  tightenTree(dir)
  assert.equal(modeOf(join(dir, 'pglite', 'base', 'relcache')), 0o600)
  assert.equal(modeOf(join(dir, 'other.txt')), 0o644, 'a file the service did not make keeps its mode')
})
