#include "events/stop_budget.h"

#include <math.h>

void stop_budget_init(struct stop_budget *b, double max_stopped_percent, uint64_t now_ns, double credit_s)
{
	b->share = max_stopped_percent > 0 ? max_stopped_percent / 100.0 : 0;
	b->balance_s = b->share > 0 ? credit_s : 0;
	b->refilled_ns = now_ns;
	b->charged_s = 0;
	b->held_off = false;
}

void stop_budget_charge(struct stop_budget *b, double total_stopped_s, uint64_t now_ns)
{
	double stopped_s = total_stopped_s - b->charged_s;
	b->charged_s = total_stopped_s;
	if (!(b->share > 0))
		return;
	if (now_ns > b->refilled_ns) {
		b->balance_s += b->share * (double)(now_ns - b->refilled_ns) / 1e9;
		b->refilled_ns = now_ns;
	}
	b->balance_s = fmin(b->balance_s, b->share) - stopped_s;
}

void stop_budget_refund(struct stop_budget *b, double refund_s)
{
	if (b->share > 0 && refund_s > 0)
		b->balance_s = fmin(b->balance_s + refund_s, b->share);
}

bool stop_budget_overdrawn(const struct stop_budget *b)
{
	return b->share > 0 && b->balance_s < 0;
}

uint64_t stop_budget_clear_at(struct stop_budget *b, uint64_t wanted_ns)
{
	if (!stop_budget_overdrawn(b))
		return wanted_ns;
	uint64_t clear = b->refilled_ns + (uint64_t)ceil(-b->balance_s / b->share * 1e9);
	if (clear <= wanted_ns)
		return wanted_ns;
	b->held_off = true;
	return clear;
}
