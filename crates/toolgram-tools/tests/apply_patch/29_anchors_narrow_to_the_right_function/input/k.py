class A:
    def run(self):
        return 1

class B:
    def run(self):
        return 1
