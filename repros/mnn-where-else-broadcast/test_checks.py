from kb.checks import Checks

checks = Checks(__file__)  # every check is a row of the front matter
