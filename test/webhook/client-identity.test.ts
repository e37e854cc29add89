import { describe, expect, it } from 'vitest';
import { clientNamed } from '../../src/webhook/client-identity.js';

// The name check of --client-name over the certificate fields Node's getPeerCertificate() returns
// (subject.CN a string, or an array when the subject repeats it; subjectaltname as Node prints it).
describe('clientNamed', () => {
  const names = ['kube-apiserver-webhook-client', 'front-proxy-client'];

  it('matches the one CN, or a DNS SAN, exactly', () => {
    expect(clientNamed({ subject: { CN: 'kube-apiserver-webhook-client' } } as never, names)).toBe(true);
    expect(
      clientNamed(
        { subject: { CN: 'x' }, subjectaltname: 'IP Address:10.0.0.1, DNS:front-proxy-client' } as never,
        names,
      ),
    ).toBe(true);
    expect(clientNamed({ subject: { CN: 'KUBE-APISERVER-WEBHOOK-CLIENT' } } as never, names)).toBe(false);
    expect(clientNamed({ subject: { CN: 'front-proxy-client.evil' } } as never, names)).toBe(false);
  });

  it('no certificate, several CNs, or a quoted SAN entry match nothing', () => {
    expect(clientNamed(undefined, names)).toBe(false);
    expect(clientNamed({}, names)).toBe(false);
    expect(clientNamed({ subject: { CN: ['front-proxy-client', 'tenant'] } } as never, names)).toBe(false);
    // Node quotes a SAN holding a comma: 'DNS:"front-proxy-client, DNS:x"' is one hostile name.
    expect(clientNamed({ subjectaltname: 'DNS:"front-proxy-client, DNS:x"' } as never, names)).toBe(false);
    expect(clientNamed({ subjectaltname: 'URI:front-proxy-client, email:front-proxy-client' } as never, names)).toBe(
      false,
    );
  });
});
