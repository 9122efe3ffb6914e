import { AppError } from '../../errors';
import type { WebhooksRepo } from '../../store/webhooks-repo';
import { resolveTarget, type Lookup } from '../../webhooks/address';
import type { Handlers } from '../types';
import { page, withCursor } from './paging';

export interface WebhookHandlerDeps {
  webhooks: WebhooksRepo;
  perUser: number;
  allowPrivate: boolean;
  lookup: Lookup;
}

/**
 * A URL a webhook may use: https: (http: only with WEBHOOK_ALLOW_PRIVATE), and a host that resolves to no
 * forbidden address (SECURITY.md, SSRF); checked again at each delivery. Else 400 at /body/url, nothing written.
 */
async function checkUrl(deps: WebhookHandlerDeps, url: string): Promise<void> {
  try {
    await resolveTarget(url, deps.allowPrivate, deps.lookup);
  } catch (err) {
    const detail = (err as Error).message;
    throw new AppError('validation_failed', `The webhook URL is refused: ${detail}.`, [{ pointer: '/body/url', detail }]);
  }
}

/** Webhooks tag. Every call takes the caller's user id; another user's webhook is 404 like a missing one. */
export function webhookHandlers(deps: WebhookHandlerDeps): Handlers {
  const { webhooks } = deps;
  return {
    listWebhooks: ({ principal, query }) => {
      const { limit, startingAfter } = page(query);
      return { status: 200, body: withCursor(webhooks.list(principal.userId, limit, startingAfter)) };
    },

    createWebhook: async ({ principal, body }) => {
      await checkUrl(deps, body.url);
      const created = webhooks.create(principal.userId, body, deps.perUser);
      return { status: 201, body: created, headers: { Location: `/v1/webhooks/${created.id}` } };
    },

    getWebhook: ({ principal, path }) => ({ status: 200, body: webhooks.get(principal.userId, path.webhook_id) }),

    updateWebhook: async ({ principal, path, body }) => {
      webhooks.get(principal.userId, path.webhook_id); // 404 before the URL is looked up
      if (body.url !== undefined) await checkUrl(deps, body.url);
      return { status: 200, body: webhooks.update(principal.userId, path.webhook_id, body) };
    },

    deleteWebhook: ({ principal, path }) => {
      webhooks.remove(principal.userId, path.webhook_id);
      return { status: 204, body: undefined };
    },

    rotateWebhookSecret: ({ principal, path }) => ({ status: 200, body: webhooks.rotate(principal.userId, path.webhook_id) }),

    listWebhookDeliveries: ({ principal, path, query }) => {
      const { limit, startingAfter } = page(query);
      return { status: 200, body: withCursor(webhooks.deliveries(principal.userId, path.webhook_id, { limit, startingAfter })) };
    },

    testWebhook: ({ principal, path }) => ({ status: 202, body: webhooks.test(principal.userId, path.webhook_id) }),
  };
}
