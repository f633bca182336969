"""The merchant's desk: the shop's support staff find any order by what the customer quotes, read
its whole story, act on it, and see the funnel (``GET {prefix}/desk/``, only with
``CHECKOUT_DESK_ACCESS``; see the README's "The merchant's desk").

Import what you use from its modules: this package itself imports nothing, so that the modules
that write what the desk reads (the journey, the webhooks) load none of its pages.

What the checkout writes for it, where it learns it:

``digests``   the keyed digests it names sessions and searchable values by (never in clear)
``index``     its index of orders and their search keys (an order created here, a webhook, a
              read of the full order)
``steps``     the step events of the funnel, once per session and step
``journal``   the session store's hooks: sessions opened, orders created, steps reached

What it reads and does (the pages):

``access``    who may use it (``CHECKOUT_DESK_ACCESS``), the staff member and their role
``forgery``   the anti-forgery token of its forms, bound to the staff member
``masking``   email and phone as the desk shows them
``search``    one box for what a customer quotes, filters, pages
``export``    the CSV of a list, safe in a spreadsheet
``story``     one order's facts and timeline
``actions``   "check with the partner now", "send the signal again", and the audit trail
``funnel``    sessions reaching each step, and where they left
``overview``  orders, money, webhook health for a period
``charts``    bar charts drawn as SVG on the server
``views``     the desk's blueprint: its routes and pages
"""
