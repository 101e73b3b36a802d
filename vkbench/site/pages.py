"""Every page of the site, listed once: ``make_offline`` writes them in this order and the navigation
links them in it (:class:`~vkbench.site.page.Page`). Adding a page: a module with its ``PAGE``, and
one line here.
"""

from __future__ import annotations

from vkbench.site.bugs_page import PAGE as BUGS
from vkbench.site.changes_page import PAGE as CHANGES
from vkbench.site.coverage_page import PAGE as COVERAGE
from vkbench.site.dashboard import PAGE as DASHBOARD
from vkbench.site.page import Page
from vkbench.site.runtime_page import PAGE as RUNTIME

PAGES: tuple[Page, ...] = (CHANGES, COVERAGE, RUNTIME, BUGS, DASHBOARD)
