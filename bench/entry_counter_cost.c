/* entry_counter_cost.c — what one pass through an entry counter's code
 * costs a call (src/trace/entry_counter.c), in ns per call per thread:
 * mode 0 nothing, 1 one shared counter (lock incq on one line), 2 the
 * slots the tracer uses (a slot per thread by the stack pointer). Run by
 * bench/entry_counter.sh with 1 and 2 threads, side by side. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static unsigned long shared_ctr;
static unsigned long slots[8 * 8] __attribute__((aligned(64)));
static int mode;
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static void *run(void *a){
  long n=20000000;
  for(long i=0;i<n;i++){
    if(mode==1) __asm__ volatile("lea -128(%%rsp),%%rsp\n pushfq\n lock incq %0\n popfq\n lea 128(%%rsp),%%rsp":"+m"(shared_ctr)::"memory");
    else if(mode==2) __asm__ volatile("lea -128(%%rsp),%%rsp\n pushfq\n push %%rax\n push %%rcx\n mov %%rsp,%%rax\n shr $21,%%rax\n mov %%rax,%%rcx\n shr $2,%%rcx\n xor %%rcx,%%rax\n and $7,%%eax\n shl $6,%%eax\n lea %0,%%rcx\n lock incq (%%rcx,%%rax)\n pop %%rcx\n pop %%rax\n popfq\n lea 128(%%rsp),%%rsp"::"m"(slots):"memory");
    else __asm__ volatile("":::"memory");
  }
  return a;
}
int main(int c,char**v){mode=atoi(v[1]);int nt=atoi(v[2]);pthread_t t[8];double t0=now();for(int i=0;i<nt;i++)pthread_create(&t[i],0,run,0);for(int i=0;i<nt;i++)pthread_join(t[i],0);double d=now()-t0;
unsigned long sum=shared_ctr;for(int i=0;i<64;i++)sum+=slots[i];printf("mode %d threads %d: %.2f ns/iter/thread sum %lu\n",mode,nt,d/20000000*1e9,sum);}
