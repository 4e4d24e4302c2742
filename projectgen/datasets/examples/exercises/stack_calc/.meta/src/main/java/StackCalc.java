import java.util.ArrayDeque;
import java.util.Deque;

public class StackCalc {
    public static int evaluate(String expression) {
        Deque<Integer> stack = new ArrayDeque<>();
        for (String token : expression.trim().split("\\s+")) {
            if (token.isEmpty()) {
                continue;
            }
            if (token.equals("+") || token.equals("-") || token.equals("*")) {
                if (stack.size() < 2) {
                    throw new IllegalArgumentException("operator " + token + " needs two values");
                }
                int right = stack.pop();
                int left = stack.pop();
                stack.push(token.equals("+") ? left + right : token.equals("-") ? left - right : left * right);
            } else {
                stack.push(Integer.parseInt(token));
            }
        }
        if (stack.size() != 1) {
            throw new IllegalArgumentException("the expression leaves " + stack.size() + " values");
        }
        return stack.pop();
    }
}
