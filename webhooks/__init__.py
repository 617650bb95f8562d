"""The webhook delivery worker (`affdir-webhooks`): signed requests, by the Standard Webhooks
specification, of each account's events to the endpoints an operator registered.

signing (secrets, payloads, headers), targets (which addresses may be contacted), schedule
(retries and giving up), sender (one HTTP attempt), worker (the loop), cli (the process).
"""
