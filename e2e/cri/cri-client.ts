import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';

/** The CRI v1 definition vendored from kubernetes/cri-api (see proto/PROVENANCE.md). */
const PROTO = fileURLToPath(new URL('./proto/api.proto', import.meta.url));

/** A CRI message as proto-loader decodes it: enums as strings, int64 as numbers, bytes as Buffers. */
export type Message = Record<string, unknown>;

type Unary = (request: Message, options: grpc.CallOptions, done: (error: Error | null, reply: Message) => void) => void;
type Service = grpc.Client & Record<string, Unary>;

/**
 * The two CRI services over containerd's socket, each call a promise with a deadline, as the
 * kubelet's remote runtime client makes them (it, too, puts a deadline on every call).
 */
export class CriClient {
  private constructor(
    private readonly runtime: Service,
    private readonly images: Service,
  ) {}

  static connect(socket: string): CriClient {
    const definition = protoLoader.loadSync(PROTO, {
      keepCase: true,
      longs: Number,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    const loaded = grpc.loadPackageDefinition(definition) as unknown as {
      runtime: { v1: Record<string, new (address: string, credentials: grpc.ChannelCredentials) => Service> };
    };
    const { RuntimeService, ImageService } = loaded.runtime.v1;
    if (!RuntimeService || !ImageService) throw new Error(`${PROTO} has no RuntimeService or ImageService`);
    const address = `unix://${socket}`;
    return new CriClient(
      new RuntimeService(address, grpc.credentials.createInsecure()),
      new ImageService(address, grpc.credentials.createInsecure()),
    );
  }

  /** A RuntimeService call (Version, Status, RunPodSandbox, CreateContainer, ...). */
  call(method: string, request: Message = {}, timeoutMs = 60_000): Promise<Message> {
    return invoke(this.runtime, method, request, timeoutMs);
  }

  /** An ImageService call (ImageStatus, ListImages, ...). */
  image(method: string, request: Message = {}, timeoutMs = 30_000): Promise<Message> {
    return invoke(this.images, method, request, timeoutMs);
  }

  close(): void {
    this.runtime.close();
    this.images.close();
  }
}

/** grpc-go's names of the status codes (google.golang.org/grpc/codes, code_string.go), by number. */
const GO_CODES = [
  'OK',
  'Canceled',
  'Unknown',
  'InvalidArgument',
  'DeadlineExceeded',
  'NotFound',
  'AlreadyExists',
  'PermissionDenied',
  'ResourceExhausted',
  'FailedPrecondition',
  'Aborted',
  'OutOfRange',
  'Unimplemented',
  'Internal',
  'Unavailable',
  'DataLoss',
  'Unauthenticated',
];

/** A failed CRI call; `goText` is the error as the kubelet's Go client prints it (`%v` of a status error). */
export class CriCallError extends Error {
  constructor(
    method: string,
    message: string,
    readonly goText: string,
  ) {
    super(`CRI ${method}: ${message}`);
  }
}

function invoke(service: Service, method: string, request: Message, timeoutMs: number): Promise<Message> {
  const fn = service[method];
  if (typeof fn !== 'function') return Promise.reject(new Error(`the CRI has no method ${method}`));
  return new Promise((resolve, reject) => {
    fn.call(service, request, { deadline: Date.now() + timeoutMs }, (error, reply) => {
      if (!error) return resolve(reply);
      const status = error as Error & { code?: number; details?: string };
      // status.Error() in grpc-go: "rpc error: code = %s desc = %s".
      const goText = `rpc error: code = ${GO_CODES[status.code ?? 2] ?? 'Unknown'} desc = ${status.details ?? error.message}`;
      reject(new CriCallError(method, error.message, goText));
    });
  });
}
