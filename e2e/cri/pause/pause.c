/* The pod sandbox's only process: it holds the pod's namespaces and reaps orphans until told to stop.
 * Built statically by e2e/cri/images.ts into the image the CRI plugin is configured to use as its
 * sandbox image, so RunPodSandbox never tries to pull one. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signo) { (void)signo; _exit(0); }

static void reap(int signo) {
  (void)signo;
  while (waitpid(-1, 0, WNOHANG) > 0) {
  }
}

int main(void) {
  signal(SIGINT, stop);
  signal(SIGTERM, stop);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
