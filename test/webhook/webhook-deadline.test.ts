import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAuthority, removeAuthority, type Authority } from '../harness/certs.js';
import { halfSentReview, send, type WebhookProcess } from './webhook-client.js';
import { startWebhook } from './webhook-process.js';
import { LIBFAKETIME, startBusyLoops } from '../harness/starvation.js';

let authority: Authority;
let webhook: WebhookProcess;
let clockFile: string;

const hangingRequest = (uid: string): Promise<string> => halfSentReview(webhook.port, authority.ca, uid);

beforeAll(async () => {
  authority = makeAuthority('deadline');
  clockFile = join(authority.dir, 'faketime');
  writeFileSync(clockFile, '+0\n');
  // Only the wall clock is faked: a deadline kept on it would never come after a step back.
  webhook = await startWebhook(
    join(authority.dir, 'tls.crt'),
    join(authority.dir, 'tls.key'),
    ['--request-deadline', '500ms'],
    {
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
      FAKETIME_NO_CACHE: '1',
      FAKETIME_TIMESTAMP_FILE: clockFile,
    },
  );
});

afterAll(async () => {
  webhook.child.kill('SIGKILL');
  await webhook.exited;
  removeAuthority(authority);
});

describe('the request deadline is kept on the monotonic clock', () => {
  it('the wall clock really is faked in the server (the step below is not a no-op)', async () => {
    writeFileSync(clockFile, '-3600\n');
    const date = (await send(webhook.port, authority.ca, '/healthz')).headers.date as string;
    expect(Math.abs(Date.parse(date) - (Date.now() - 3_600_000))).toBeLessThan(120_000);
  });

  it('a slow client is still answered after the wall clock stepped back an hour', async () => {
    writeFileSync(clockFile, '-3600\n');
    const answer = await hangingRequest('u-back');
    expect(answer).toMatch(/"uid":"u-back","allowed":true/);
    expect(answer).toMatch(/not complete within 500 ms/);
  });

  it('and under CPU starvation (busy loops on every core), with the server still up after', async () => {
    writeFileSync(clockFile, '+3600\n');
    // Killing `timeout` once left its shell spinning for good; these end themselves.
    const loops = startBusyLoops(16, 20_000);
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => hangingRequest(`u-starved-${i}`)));
      answers.forEach((answer, i) => expect(answer).toMatch(new RegExp(`"uid":"u-starved-${i}","allowed":true`)));
    } finally {
      loops.stop();
    }
    expect((await send(webhook.port, authority.ca, '/healthz')).body).toBe('ok\n');
    expect(webhook.child.exitCode).toBeNull();
  });
});
