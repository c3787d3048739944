import type { Actor } from '../../src/http/actors.ts'

/** The merchant as tests that call services directly act: an admin API key (events name it so). */
export const TEST_ADMIN: Actor = { kind: 'admin_key', keyId: 'key_test', keyName: 'Test key' }
