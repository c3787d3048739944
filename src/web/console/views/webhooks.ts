import type { ConsoleApp } from '../app.ts'
import { replaceChildren } from '../dom.ts'
import { pageHeader } from '../ui.ts'

export async function renderWebhooks(app: ConsoleApp, _isCurrent: () => boolean): Promise<void> {
  replaceChildren(app.main, pageHeader('Webhooks'))
  app.finishRender('Webhooks')
}
export async function renderWebhook(app: ConsoleApp, _isCurrent: () => boolean, _id: string): Promise<void> {
  replaceChildren(app.main, pageHeader('Webhook'))
  app.finishRender('Webhook')
}
