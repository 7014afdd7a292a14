/* stop_budget.h — the one rule for how much of the target's time our stops
 * may take: a token bucket over wall time.
 *
 * Stopped time is allowed at `share` (max_stopped_percent / 100) of the
 * wall time: the balance grows by share × elapsed and each stop spends
 * what it cost. While the balance is negative the producer holds off (the
 * sampler puts its next stop off, the tracer disables its probes) until
 * stop_budget_clear_at(). Savings are capped at one second's allowance, so
 * an idle stretch does not buy a long burst; the starting balance is the
 * producer's choice (credit_s). The stopped share over a run then stays
 * within one stop (plus the credit) of the budget.
 *
 * A budget with share 0 (max_stopped_percent 0: no budget) never holds
 * off. Times are CLOCK_MONOTONIC nanoseconds; nothing allocates.
 */
#ifndef XGDBPROF_STOP_BUDGET_H
#define XGDBPROF_STOP_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct stop_budget {
	double share;                /* allowed stopped fraction of wall time; 0: unlimited */
	double balance_s;
	double charged_s;            /* the producer's stopped total the balance has been charged */
	uint64_t refilled_ns;        /* the balance counts wall time up to here */
	bool held_off;               /* the budget held the producer off at least once */
};

void stop_budget_init(struct stop_budget *b, double max_stopped_percent, uint64_t now_ns, double credit_s);
/* Counts the wall time up to now_ns and spends what the producer's running
 * total of stopped time (total_stopped_s, never decreasing) grew by since
 * the last call. */
void stop_budget_charge(struct stop_budget *b, double total_stopped_s, uint64_t now_ns);
/* Gives back refund_s of what was spent: a stop charged at its wall length
 * first and found later to have held its thread less (the kernel's own
 * account, known only once the thread has run again). Savings stay capped. */
void stop_budget_refund(struct stop_budget *b, double refund_s);
/* Whether the balance (as of the last spend) is overdrawn. */
bool stop_budget_overdrawn(const struct stop_budget *b);
/* When the balance is back at zero (now_ns, or the last spend's time, if it
 * is not overdrawn); marks the budget as having held the producer off when
 * that is later than `wanted_ns`, the time the producer wanted. */
uint64_t stop_budget_clear_at(struct stop_budget *b, uint64_t wanted_ns);

#endif
