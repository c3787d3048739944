import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { newWebhookSecret, signatureHeader } from '../../src/modules/webhooks/webhook-signing.ts'

test('signatureHeader signs as standardwebhooks does (node:crypto, the same bytes and output), one v1 per secret', () => {
  const secrets = [newWebhookSecret(), newWebhookSecret()]
  const at = new Date('2026-11-24T12:34:56.789Z')
  for (const body of ['', '{"id":"evt_1"}', JSON.stringify({ name: 'Zoë – café ☕', note: 'x'.repeat(5_000) })]) {
    const header = signatureHeader(secrets, 'evt_01KTEST', at, body)
    assert.equal(header, secrets.map((secret) => new Webhook(secret).sign('evt_01KTEST', at, body)).join(' '))
    for (const secret of secrets) {
      if (body === '') continue
      // A receiver holding either secret verifies the delivery (standardwebhooks checks the timestamp against now).
      const now = new Date()
      new Webhook(secret).verify(body, { 'webhook-id': 'evt_01KTEST', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signatureHeader(secrets, 'evt_01KTEST', now, body) })
    }
  }
})
