import type { ConsoleApp } from '../app.ts'
import { replaceChildren } from '../dom.ts'
import { pageHeader } from '../ui.ts'

export async function renderOverview(app: ConsoleApp, _isCurrent: () => boolean): Promise<void> {
  replaceChildren(app.main, pageHeader('Overview'))
  app.finishRender('Overview')
}
